import { execa } from "execa";
import { ActionError } from "../../protocol/errors.js";
import { raiseOomScore, terminateGroup, waitGroupGone, type Escalation } from "../process/index.js";
import type { ProgressUpdate } from "./context.js";
import { startChild } from "../watchdog/child-wait.js";

/**
 * The one door to the real `git` binary. Every call runs with a sanitized environment (only
 * locale, PATH, HOME and the ssh agent socket survive; GIT_DIR and friends never leak in from the
 * daemon), no terminal prompts, hooks disabled, and a cancel signal that takes git's whole
 * process group down (clone forks remote helpers and index-pack).
 */

/** Variables a git child may inherit; anything else in the daemon's environment (tokens!) is dropped. */
const INHERITED_ENV = ["PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "SSH_AUTH_SOCK"] as const;

/** Transports git may use for a user-supplied URL; `ext::` and `fd::` run commands and are refused. */
export const ALLOWED_PROTOCOLS = "file:git:http:https:ssh";

/** Settings forced on every call: daemon-run git must never run repository hooks or wait for a signer. */
const FORCED_CONFIG = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "commit.gpgsign=false",
  "-c",
  "tag.gpgsign=false",
  "-c",
  "core.fsmonitor=false",
];

const STDERR_TAIL_BYTES = 8 * 1024;
const MAX_BUFFER_BYTES = 32 * 1024 * 1024;
const KILL_GRACE_MS = 2_000;

export interface GitCallOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Written to git's stdin (commit messages); never used for secrets. */
  input?: string;
  /** Extra variables (identity only); merged over the sanitized base. */
  env?: Record<string, string>;
  /** Return the result on a non-zero exit instead of throwing GitFailure. */
  allowFailure?: boolean;
  /** Receives git's progress lines (`--progress`) as structured updates. */
  onProgress?: (update: ProgressUpdate) => void;
  /** Receives every complete stderr line (for a job's output log). */
  onStderrLine?: (line: string) => void;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** A git command that exited non-zero; domain code turns it into the right ActionError. */
export class GitFailure extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ""} exited ${exitCode}: ${stderr.trim().split("\n").slice(-3).join(" | ") || "(no message)"}`);
    this.name = "GitFailure";
  }
}

/** Builds the environment a git child sees: an allowlist plus the fixed safety settings. */
export function gitEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return {
    ...env,
    LC_ALL: "C",
    LANG: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "",
    SSH_ASKPASS: "",
    GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS,
    GIT_OPTIONAL_LOCKS: "0",
    ...extra,
  };
}

const PROGRESS_LINE = /^(?:remote: )?([A-Z][a-z]+(?: [a-z]+)*):\s+(\d+)% \((\d+)\/(\d+)\)/;

/** Parses one `--progress` line ("Receiving objects:  45% (450/1000)") into a progress update. */
export function parseGitProgress(line: string): ProgressUpdate | undefined {
  const m = PROGRESS_LINE.exec(line.trim());
  if (!m) return undefined;
  return { phase: m[1]!.toLowerCase(), done: Number(m[3]), total: Number(m[4]), unit: "objects" };
}

/** Runs `git <args>` and returns its output; throws GitFailure on a non-zero exit unless allowFailure. */
export async function runGit(args: readonly string[], options: GitCallOptions): Promise<GitResult> {
  options.signal?.throwIfAborted();
  const child = startChild(() =>
    execa("git", [...FORCED_CONFIG, ...args], {
      cwd: options.cwd,
      env: gitEnvironment(options.env),
      extendEnv: false,
      ...(options.input === undefined ? { stdin: "ignore" as const } : { input: options.input }),
      reject: false,
      stripFinalNewline: false,
      maxBuffer: MAX_BUFFER_BYTES,
      // Own process group, so a cancel reaches git's helpers too (see onAbort below).
      detached: true,
      buffer: { stdout: true, stderr: options.onProgress === undefined && options.onStderrLine === undefined },
    }),
  );
  raiseOomScore(child.pid);
  let stderrTail = "";
  if (options.onProgress || options.onStderrLine) {
    let pending = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
      pending += chunk;
      const parts = pending.split(/\r|\n/);
      pending = parts.pop() ?? "";
      if (pending.length > STDERR_TAIL_BYTES) pending = pending.slice(-STDERR_TAIL_BYTES);
      for (const line of parts) {
        if (!line) continue;
        const update = parseGitProgress(line);
        if (update) options.onProgress?.(update);
        else options.onStderrLine?.(line);
      }
    });
  }
  let escalation: Escalation | undefined;
  const onAbort = () => {
    escalation = terminateGroup(child.pid, KILL_GRACE_MS);
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await child;
    if (result.failed && result.exitCode === undefined) {
      const code = (result.cause as NodeJS.ErrnoException | undefined)?.code;
      if (code === "ENOENT")
        throw new ActionError("unavailable", "git is not installed or not on PATH; install git to use repos.* and tasks.*");
      if (!options.signal?.aborted) throw new ActionError("internal", `git ${args[0] ?? ""} could not run: ${result.shortMessage}`);
    }
    if (options.signal?.aborted) {
      // A cancelled operation returns only once it stopped: remote helpers and index-pack too. The
      // escalation's SIGKILL comes after the grace; the wait is bounded for a process stuck in the kernel.
      await waitGroupGone(child.pid, KILL_GRACE_MS * 2);
      options.signal.throwIfAborted();
    }
    const stderr = typeof result.stderr === "string" && result.stderr.length > 0 ? result.stderr : stderrTail;
    const out: GitResult = { stdout: String(result.stdout ?? ""), stderr, exitCode: result.exitCode ?? -1 };
    if (out.exitCode !== 0 && !options.allowFailure) throw new GitFailure(args, out.exitCode, stderr);
    return out;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    // The group is gone by now (or stuck past every signal), so the SIGKILL escalation is moot.
    escalation?.cancel();
  }
}

/** Splits `-z` output into its entries, dropping the trailing empty one. */
export function splitNul(text: string): string[] {
  return text.split("\0").filter((entry) => entry.length > 0);
}

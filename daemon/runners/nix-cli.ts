import { execFile, spawn } from "node:child_process";
import { raiseOomScore, signalGroup, terminateGroup, type Escalation } from "../process/index.js";
import type { RunContext } from "./context.js";
import { startChild } from "../watchdog/child-wait.js";

/**
 * The experimental features the daemon relies on. They are passed on every Nix call (`extra-`
 * adds to whatever nix.conf says), so no machine needs a nix.conf that enables them.
 */
export const NIX_FEATURES = "nix-command flakes";
const FEATURE_ARGS = ["--extra-experimental-features", NIX_FEATURES];

/** The full argument list of one Nix call: the daemon's own settings first, then the command's. */
export function nixArgs(args: readonly string[]): string[] {
  return [...FEATURE_ARGS, ...args];
}

/** One `@nix {...}` record from `--log-format internal-json`; ids are strings (they overflow JS numbers). */
export type NixLogEvent =
  | { action: "msg"; level: number; msg: string; raw_msg?: string; line?: number | null; column?: number | null; file?: string | null }
  | { action: "start"; id: string; level: number; type: number; text: string; parent?: string; fields?: Array<number | string> }
  | { action: "stop"; id: string }
  | { action: "result"; id: string; type: number; fields?: Array<number | string> }
  | { action: "setPhase"; phase: string };

export interface NixRunOptions {
  /** Arguments after the program name; `--log-format internal-json` is added by the runner. */
  args: string[];
  program?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Called for every parsed log record, in order. */
  onEvent?(event: NixLogEvent): void;
  /** Stderr lines that were not `@nix` records (rare: messages printed before logging starts). */
  onPlainLine?(line: string): void;
  /** Largest stdout kept, in bytes (print-dev-env JSON is typically 10–500 KiB). */
  maxStdoutBytes?: number;
  /** Grace period between SIGTERM and SIGKILL on abort. */
  killGraceMs?: number;
}

export interface NixRunResult {
  exitCode: number;
  stdout: string;
  /** The last error Nix reported (level 0 with raw_msg), ANSI stripped; undefined on success. */
  errorMessage?: string;
}

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
/** Strips terminal colour codes from Nix messages. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

const BIG_IDS = /(?<!\\)"(id|parent)":(\d+)/g;
/** Parses one internal-json line, quoting `id`/`parent` first so large ids keep every digit. */
export function parseNixLogLine(line: string): NixLogEvent | null {
  if (!line.startsWith("@nix ")) return null;
  try {
    return JSON.parse(line.slice(5).replace(BIG_IDS, '"$1":"$2"')) as NixLogEvent;
  } catch {
    return null;
  }
}

/**
 * Runs one Nix command with machine-readable logs. The child leads its own process group so a
 * cancel reaches every builder it started: SIGTERM (Nix cleans up), then SIGKILL after a grace period.
 */
export function runNix(ctx: Pick<RunContext, "signal">, opts: NixRunOptions): Promise<NixRunResult> {
  const maxStdout = opts.maxStdoutBytes ?? 256 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (ctx.signal.aborted) return reject(ctx.signal.reason ?? new Error("aborted"));
    const child = startChild(() =>
      spawn(opts.program ?? "nix", nixArgs([...opts.args, "--log-format", "internal-json"]), {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      }),
    );
    raiseOomScore(child.pid); // a runaway evaluation or build is taken before the daemon
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let overflow = false;
    let lastError: string | undefined;
    let pending = "";
    let escalation: Escalation | undefined;

    const onLine = (line: string) => {
      const event = parseNixLogLine(line);
      if (!event) {
        if (line.length > 0) opts.onPlainLine?.(line);
        return;
      }
      if (event.action === "msg" && event.level === 0 && event.raw_msg !== undefined) lastError = stripAnsi(event.raw_msg);
      opts.onEvent?.(event);
    };
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    });
    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) {
        overflow = true;
        return;
      }
      stdout.push(chunk);
    });

    const onAbort = () => {
      escalation = terminateGroup(child.pid, opts.killGraceMs ?? 3000);
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });

    child.on("error", (err) => {
      ctx.signal.removeEventListener("abort", onAbort);
      reject(err);
    });
    child.on("close", (code, sig) => {
      ctx.signal.removeEventListener("abort", onAbort);
      escalation?.cancel();
      // Builders may outlive Nix when it was killed; make sure nothing of the group survives.
      if (ctx.signal.aborted) signalGroup(child.pid, "SIGKILL");
      if (pending.length > 0) onLine(pending);
      if (ctx.signal.aborted) return reject(ctx.signal.reason ?? new Error("aborted"));
      if (overflow) return reject(new Error(`nix ${opts.args[0]} printed more than ${maxStdout} bytes`));
      const exitCode = code ?? (sig ? 128 : 1);
      resolve({ exitCode, stdout: Buffer.concat(stdout).toString("utf8"), errorMessage: exitCode === 0 ? undefined : lastError });
    });
  });
}

/** Runs a short Nix command (`nix --version`, `nix-store --add-root`) with the daemon's settings; resolves its stdout. */
export function execNix(
  program: "nix" | "nix-store",
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = startChild(() =>
      execFile(
        program,
        nixArgs(args),
        { env: opts.env ?? process.env, signal: opts.signal, timeout: opts.timeoutMs ?? 0 },
        (err, stdout, stderr) => {
          if (err) reject(Object.assign(err, { stderr: stripAnsi(String(stderr)).trim() }));
          else resolve(String(stdout));
        },
      ),
    );
    raiseOomScore(child.pid);
  });
}

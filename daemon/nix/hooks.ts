import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { raiseOomScore, signalGroup } from "../process/index.js";
import { devEnvToRc, environmentFromExports, type DevEnvJson } from "./dev-env.js";
import type { PreparedEnvironment } from "./environment.js";
import { startChild } from "../watchdog/child-wait.js";

export interface HookRunOptions {
  cwd: string;
  signal: AbortSignal;
  timeoutMs: number;
  /** The hook's stdout and stderr, for the job log. */
  onOutput(stream: "stdout" | "stderr", data: Buffer): void;
  hostPath?: string;
}

const MARKER = "HOTLINE-HOOK-DONE";
// Hook stdout goes to stderr (the log); the environment is dumped NUL-separated on fd 3, after a
// marker that proves the hook neither called `exit` nor `exec`. The hook's temp dir is removed.
const SCRIPT = `source "$1" 1>&2
eval "\${shellHook:-}" 1>&2
printf '%s\\0' ${MARKER} >&3
env -0 >&3
case "\${NIX_BUILD_TOP:-}" in */nix-shell.*) rm -rf -- "$NIX_BUILD_TOP";; esac
`;

/**
 * Runs the dev shell's hook once, in a clean `bash --noprofile --norc` with stdin from /dev/null,
 * the whole rc (functions and arrays) sourced first, and returns the environment it exported.
 */
export async function runShellHook(json: DevEnvJson, opts: HookRunOptions): Promise<PreparedEnvironment> {
  const dir = mkdtempSync(join(tmpdir(), "hotline-hook-"));
  const rcPath = join(dir, "rc.sh");
  writeFileSync(rcPath, devEnvToRc(json));
  const hostPath = opts.hostPath ?? process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  const user = userInfo().username;
  const base: Record<string, string> = { HOME: homedir(), USER: user, LOGNAME: user, PATH: hostPath, LANG: process.env.LANG ?? "C.UTF-8" };
  try {
    const dump = await new Promise<Buffer>((resolve, reject) => {
      const child = startChild(() =>
        spawn("bash", ["--noprofile", "--norc", "-c", SCRIPT, "hotline-hook", rcPath], {
          cwd: opts.cwd,
          env: base,
          stdio: ["ignore", "pipe", "pipe", "pipe"],
          detached: true,
        }),
      );
      raiseOomScore(child.pid); // the workspace's own shell hook
      const chunks: Buffer[] = [];
      const killGroup = (): boolean => signalGroup(child.pid, "SIGKILL");
      let failure: Error | undefined;
      const timer = setTimeout(() => {
        failure = new Error(`the shell hook did not finish within ${Math.round(opts.timeoutMs / 1000)} s; it was stopped`);
        killGroup();
      }, opts.timeoutMs);
      const onAbort = () => {
        failure = opts.signal.reason instanceof Error ? opts.signal.reason : new Error("cancelled");
        killGroup();
      };
      opts.signal.addEventListener("abort", onAbort, { once: true });
      child.stdout!.on("data", (d: Buffer) => opts.onOutput("stdout", d));
      child.stderr!.on("data", (d: Buffer) => opts.onOutput("stderr", d));
      (child.stdio[3] as NodeJS.ReadableStream).on("data", (d: Buffer) => chunks.push(d));
      child.on("error", reject);
      child.on("close", () => {
        clearTimeout(timer);
        opts.signal.removeEventListener("abort", onAbort);
        // A background process the hook left behind must not outlive preparation.
        killGroup();
        if (failure) reject(failure);
        else resolve(Buffer.concat(chunks));
      });
    });
    const entries = dump.toString("utf8").split("\0");
    const markerAt = entries.indexOf(MARKER);
    if (markerAt < 0) throw new Error("the shell hook exited before it finished (does it call exit or exec?)");
    const exported: Record<string, string> = {};
    for (const entry of entries.slice(markerAt + 1)) {
      const eq = entry.indexOf("=");
      if (eq <= 0) continue;
      const name = entry.slice(0, eq);
      const value = entry.slice(eq + 1);
      if (name !== "PATH" && base[name] === value) continue;
      exported[name] = value;
    }
    const outputs =
      json.variables.outputs?.type === "exported" ? new Set(json.variables.outputs.value.split(/\s+/).filter(Boolean)) : new Set<string>();
    return environmentFromExports(exported, outputs, hostPath.split(":"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

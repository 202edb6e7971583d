import { execa } from "execa";
import type { RunContext } from "./context.js";
import { reapGroup, signalGroup } from "./process-group.js";

export interface ProcessSpec {
  /** argv: file then arguments (a shell command arrives here as ["bash", "-c", cmd]). */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** A string is written then stdin closes; true keeps stdin open for input; false/absent: EOF at once. */
  stdin?: string | boolean;
}

/** How the job layer drives a running process. */
export interface ProcessControl {
  input(data: Buffer, eof: boolean): number;
  kill(signal: NodeJS.Signals): void;
  resize?(cols: number, rows: number): void;
}

export interface ProcessExit {
  exitCode?: number;
  signal?: string;
  /** The process could not be started at all (no such file, not executable, bad cwd). */
  spawnError?: string;
}

/**
 * Runs a command with pipes in its own process group (detached), streaming stdout/stderr into the
 * job log as they arrive. Abort (the job's signal) kills the whole group at once.
 */
export function startProcess(spec: ProcessSpec, ctx: RunContext): { control: ProcessControl; done: Promise<ProcessExit> } {
  const [file, ...args] = spec.argv;
  const child = execa(file!, args, {
    cwd: spec.cwd,
    env: spec.env,
    extendEnv: false,
    detached: true,
    buffer: false,
    reject: false,
    cleanup: false,
    stdin: spec.stdin === true ? "pipe" : typeof spec.stdin === "string" ? "pipe" : "ignore",
    stdout: "pipe",
    stderr: "pipe",
    stripFinalNewline: false,
  });
  child.stdout?.on("data", (chunk: Buffer) => ctx.output("stdout", chunk));
  child.stderr?.on("data", (chunk: Buffer) => ctx.output("stderr", chunk));
  child.stdin?.on("error", () => {}); // a child that exits before reading its stdin is not our error
  if (typeof spec.stdin === "string") child.stdin?.end(spec.stdin);

  const onAbort = (): void => {
    signalGroup(child.pid, "SIGKILL");
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  child.once("exit", () => reapGroup(child.pid));

  const control: ProcessControl = {
    input(data, eof) {
      const stdin = child.stdin;
      if (!stdin || stdin.writableEnded || stdin.destroyed) return -1;
      if (data.length) stdin.write(data);
      if (eof) stdin.end();
      return data.length;
    },
    kill(signal) {
      signalGroup(child.pid, signal);
    },
  };

  const done = child.then((result) => {
    ctx.signal.removeEventListener("abort", onAbort);
    if (result.failed && result.exitCode === undefined && result.signal === undefined) {
      return { spawnError: result.shortMessage ?? result.message };
    }
    const exit: ProcessExit = {};
    if (result.exitCode !== undefined) exit.exitCode = result.exitCode;
    if (result.signal !== undefined) exit.signal = result.signal;
    return exit;
  });
  return { control, done };
}

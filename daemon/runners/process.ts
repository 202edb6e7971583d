import { spawn, type ChildProcess } from "node:child_process";
import type { RunContext } from "./context.js";
import { EXEC_SIZE_ADVICE } from "../util/exec-limits.js";
import { InputQueue } from "../util/input-queue.js";
import { raiseOomScore, reapMarked, signalGroup, terminateGroup } from "../process/index.js";
import { startChild } from "../watchdog/child-wait.js";

export interface ProcessSpec {
  /** argv: file then arguments (a shell command arrives here as ["bash", "-c", cmd]). */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** A string is written then stdin closes; true keeps stdin open for input; false/absent: EOF at once. */
  stdin?: string | boolean;
  /** The job whose marker (JOB_MARKER in env) its processes carry: at exit, any of them left outside the group are stopped too. */
  jobId?: string;
}

/** How the job layer drives a running process. */
export interface ProcessControl {
  /** The process (and process group) id, when it started. */
  pid?: number;
  /** Resolves with the bytes the job took (-1: it has no open input); see InputQueue for the refusals. */
  input(data: Buffer, eof: boolean, timeoutMs: number): Promise<number>;
  kill(signal: NodeJS.Signals): void;
  resize?(cols: number, rows: number): void;
  /** Stops reading its output until resume (a reader that cannot take more: an SSH channel's window). */
  pause?(): void;
  resume?(): void;
}

export interface ProcessExit {
  exitCode?: number;
  signal?: string;
  /** The process could not be started at all (no such file, not executable, bad cwd). */
  spawnError?: string;
  /** The errno code of that failure (ENOENT, EACCES, E2BIG …). */
  spawnErrno?: string;
}

/** Why a spawn failed, in words that say what to change. */
function describeSpawnError(file: string, err: NodeJS.ErrnoException): string {
  if (err.code === "E2BIG") {
    return `cannot start ${file}: its arguments and environment are too large for exec (E2BIG); ${EXEC_SIZE_ADVICE}`;
  }
  if (err.code === "EACCES")
    return `cannot start ${file}: permission denied (EACCES); make it executable (chmod +x) or run it through its interpreter`;
  if (err.code === "EAGAIN" || err.code === "EMFILE" || err.code === "ENFILE" || err.code === "ENOMEM") {
    return `cannot start ${file}: the system is out of processes, file descriptors or memory (${err.code}); retry when other jobs have ended`;
  }
  return `cannot start ${file}: ${err.message}`;
}

/** A job whose process never started: nothing to control, and its end is already known. */
export function notStarted(file: string, err: NodeJS.ErrnoException): { control: ProcessControl; done: Promise<ProcessExit> } {
  return {
    control: { input: async () => -1, kill: () => {} },
    done: Promise.resolve({ spawnError: describeSpawnError(file, err), spawnErrno: err.code }),
  };
}

/**
 * Runs a command with pipes in its own process group (detached), streaming stdout/stderr into the
 * job log as they arrive. Abort (the job's signal) kills the whole group at once.
 */
export function startProcess(spec: ProcessSpec, ctx: RunContext): { control: ProcessControl; done: Promise<ProcessExit> } {
  const [file, ...args] = spec.argv;
  // node's spawn, not execa, on this hot path: execa's option normalisation and stream plumbing cost
  // ~0.75 ms per start (+55 % over a bare spawn, measured by `npm run bench`), and we use none of it —
  // no buffering, no shell, raw streams into the job log, our own process-group termination.
  let child: ChildProcess;
  try {
    child = startChild(() =>
      spawn(file!, args, {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: [spec.stdin === true || typeof spec.stdin === "string" ? "pipe" : "ignore", "pipe", "pipe"],
      }),
    );
  } catch (err) {
    // Node throws at once for errors other than ENOENT/EACCES/EAGAIN/EMFILE/ENFILE — E2BIG among them.
    return notStarted(file!, err as NodeJS.ErrnoException);
  }
  raiseOomScore(child.pid);
  child.stdout!.on("data", (chunk: Buffer) => ctx.output("stdout", chunk));
  child.stderr!.on("data", (chunk: Buffer) => ctx.output("stderr", chunk));
  child.stdin?.on("error", () => {}); // a child that exits before reading its stdin is not our error
  if (typeof spec.stdin === "string") child.stdin?.end(spec.stdin);

  const onAbort = (): void => {
    signalGroup(child.pid, "SIGKILL");
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  child.once("exit", () => {
    terminateGroup(child.pid); // background children left in its group
    if (spec.jobId !== undefined) reapMarked(spec.jobId);
  });

  const stdin = spec.stdin === true ? child.stdin : null;
  const input = stdin
    ? new InputQueue(
        spec.jobId ?? String(child.pid),
        (piece) => new Promise<void>((resolve, reject) => stdin.write(piece, (err) => (err ? reject(err) : resolve()))),
        () => {
          stdin.end();
        },
      )
    : undefined;
  const control: ProcessControl = {
    pid: child.pid,
    async input(data, eof, timeoutMs) {
      if (!input || !stdin || stdin.writableEnded || stdin.destroyed) return -1;
      return input.write(data, eof, timeoutMs);
    },
    kill(signal) {
      signalGroup(child.pid, signal);
    },
  };

  // "close" comes after "exit" and after both pipes have ended, so no output is missed.
  const done = new Promise<ProcessExit>((resolve) => {
    let spawnError: Error | undefined;
    child.once("error", (err) => {
      spawnError = err;
      if (child.pid === undefined) finish(null, null);
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      ctx.signal.removeEventListener("abort", onAbort);
      if (child.pid === undefined && spawnError) {
        return resolve({ spawnError: describeSpawnError(file!, spawnError), spawnErrno: (spawnError as NodeJS.ErrnoException).code });
      }
      const exit: ProcessExit = {};
      if (code !== null) exit.exitCode = code;
      if (signal !== null) exit.signal = signal;
      resolve(exit);
    };
    child.once("close", (code, signal) => finish(code, signal));
  });
  return { control, done };
}

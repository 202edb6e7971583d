import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { raiseOomScore, signalGroup, signalTarget, terminateGroup, type Escalation } from "../process/index.js";
import { InputQueue } from "../util/input-queue.js";
import { startChild } from "../watchdog/child-wait.js";

/** How one generation of a long-lived child starts. */
export interface ChildSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** fd 0: a pipe the daemon holds (the user's input, or a driver's control lines), or /dev/null. */
  stdin: "pipe" | "ignore";
}

/** How a child ended: its code or signal, or why it never started. */
export interface ChildExit {
  exitCode?: number;
  signal?: string;
  error?: string;
}

/** Where a child's bytes go: fd 1 and 2 as output, fd 4 (its messages) to the decoder. */
export interface ChildHooks {
  output(stream: "stdout" | "stderr", data: Buffer): void;
  messages(chunk: Buffer): void;
}

/** The fd layout every driver gets: 0 stdin, 1 stdout, 2 stderr, 3 requests (daemon → child), 4 messages (child → daemon). */
export const REQUESTS_FD = 3;
export const MESSAGES_FD = 4;

/**
 * One long-lived child process in its own process group, with its private channels (fd 3 in,
 * fd 4 out) beside its stdio. It never owns the decision to end: callers signal it.
 */
export class ReplChild {
  readonly pid: number | undefined;
  readonly exited: Promise<ChildExit>;
  private readonly proc: ChildProcess;
  private stdinQueue: InputQueue | undefined;
  private ended = false;

  constructor(spec: ChildSpec, hooks: ChildHooks) {
    const [file, ...args] = spec.argv;
    this.proc = startChild(() =>
      spawn(file!, args, {
        cwd: spec.cwd,
        env: spec.env,
        detached: true, // its own process group: a group signal reaches everything it started there
        stdio: [spec.stdin, "pipe", "pipe", "pipe", "pipe"],
      }),
    );
    this.pid = this.proc.pid;
    raiseOomScore(this.pid);
    // Every stream gets an error listener: a write to a child that just died is EPIPE, not a crash.
    for (const stream of this.proc.stdio) (stream as NodeJS.EventEmitter | null)?.on("error", () => {});
    this.proc.stdout!.on("data", (chunk: Buffer) => hooks.output("stdout", chunk));
    this.proc.stderr!.on("data", (chunk: Buffer) => hooks.output("stderr", chunk));
    (this.proc.stdio[MESSAGES_FD] as Readable).on("data", (chunk: Buffer) => hooks.messages(chunk));
    this.exited = new Promise((resolve) => {
      this.proc.once("error", (err) => {
        if (this.proc.pid === undefined) resolve({ error: `cannot start ${file}: ${err.message}` });
      });
      this.proc.once("exit", (code, signal) => {
        this.ended = true;
        resolve(code !== null ? { exitCode: code } : { signal: signal ?? "SIGKILL" });
      });
    });
  }

  /** Whether the process has exited (its pipes may still hold output). */
  get hasExited(): boolean {
    return this.ended || this.pid === undefined;
  }

  /** fd 0, when the spec asked for a pipe. */
  get stdin(): Writable | null {
    return this.proc.stdin;
  }

  /** fd 3: what the daemon sends the driver. */
  get requests(): Writable {
    return this.proc.stdio[REQUESTS_FD] as Writable;
  }

  /** jobs.input for a request, written to fd 0 with backpressure; -1 when fd 0 is not an open pipe. */
  input(data: Buffer, eof: boolean, timeoutMs: number): Promise<number> {
    const stdin = this.proc.stdin;
    if (!stdin || stdin.writableEnded || stdin.destroyed) return Promise.resolve(-1);
    this.stdinQueue ??= new InputQueue(
      `child ${this.pid}`,
      (piece) => new Promise<void>((resolve, reject) => stdin.write(piece, (err) => (err ? reject(err) : resolve()))),
      () => void stdin.end(),
    );
    return this.stdinQueue.write(data, eof, timeoutMs);
  }

  /** A signal to the child process itself (a driver's interrupt). */
  signal(signal: NodeJS.Signals): boolean {
    return this.pid !== undefined && signalTarget(this.pid, signal);
  }

  /** A signal to its whole process group. */
  signalGroup(signal: NodeJS.Signals): boolean {
    return signalGroup(this.pid, signal);
  }

  /** EOF on its inputs (a driver's cue to exit), then SIGTERM to the group and SIGKILL after the grace. */
  terminate(graceMs: number): Escalation {
    this.proc.stdin?.end();
    this.requests.end();
    return terminateGroup(this.pid, graceMs);
  }
}

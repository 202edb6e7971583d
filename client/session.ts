import type { ActionName, ParamsFor, ResultFor } from "../protocol/index.js";
import type { Job } from "./job.js";

/** A session's status as the daemon reports it (session.open, session.status). */
export type SessionStatus = ResultFor<"session.status">["session"];
/** A session command's job status: a job's, with `session`, `awaitingInput`, `lastLine`, `shellReplaced`. */
export type SessionJobStatus = ResultFor<"session.run">["job"];

/** The one thing a Session needs from its client. */
export interface SessionHost {
  request<N extends ActionName>(action: N, params: ParamsFor<N>): Promise<ResultFor<N>>;
  job(id: string): Job;
}

/** What `run` resolves with: the command's job, its status and exit code, and its output when it ended or waits for input. */
export interface SessionRunResult {
  job: Job;
  status: SessionJobStatus;
  /** The command's own exit code, once it ended. */
  exitCode?: number;
  /** The output (both streams, interleaved); when long, its head and tail with `omittedBytes` left out between. */
  output?: Buffer;
  omittedBytes?: number;
  /** The command is blocked reading its stdin: answer with `input`, or cancel the job. */
  awaitingInput: boolean;
  /** The last line it printed (the prompt), while it awaits input. */
  lastLine?: string;
}

/** session.run's longest wait; `run` waits this long unless told otherwise. */
const MAX_WAIT_MS = 600_000;

/**
 * A handle on one shell session: `cd`, variables, functions and an activated venv carry from one
 * `run` to the next, and each command is a job of its own with its own exit code.
 */
export class Session {
  constructor(
    private readonly host: SessionHost,
    readonly id: string,
    /** The status the handle was made with (open or attach); `status()` asks again. */
    readonly opened: SessionStatus,
  ) {}

  /**
   * Runs a command and resolves when it ended, or when it waits for input (then `awaitingInput`
   * and `lastLine`), or when `wait` (default and at most 600 s) passed. `conflict` while another runs.
   */
  async run(command: string, options: { timeoutMs?: number; key?: string; wait?: number } = {}): Promise<SessionRunResult> {
    const { job, output } = await this.host.request("session.run", {
      ...options,
      wait: options.wait ?? MAX_WAIT_MS,
      session: this.id,
      command,
    });
    const result: SessionRunResult = { job: this.host.job(job.id), status: job, awaitingInput: job.awaitingInput === true };
    if (job.exitCode !== undefined) result.exitCode = job.exitCode;
    if (job.lastLine !== undefined) result.lastLine = job.lastLine;
    if (output) {
      result.output = Buffer.from(output.data, output.encoding === "base64" ? "base64" : "utf8");
      result.omittedBytes = output.omittedBytes;
    }
    return result;
  }

  /** Writes to a running command's stdin (`eof` closes it); resolves with the bytes it took. */
  async input(job: string | Job, data: string | Buffer, options: { eof?: boolean } = {}): Promise<number> {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    const id = typeof job === "string" ? job : job.id;
    const { written } = await this.host.request("jobs.input", {
      job: id,
      data: bytes.toString("base64"),
      encoding: "base64",
      eof: options.eof,
    });
    return written;
  }

  async status(): Promise<SessionStatus> {
    return (await this.host.request("session.status", { session: this.id })).session;
  }

  /** Ends the shell and every process it started; resolves with the final status. */
  async close(): Promise<SessionStatus> {
    return (await this.host.request("session.close", { session: this.id })).session;
  }
}

import type { CodeLanguage, CodeRunResult } from "../../protocol/actions/code.js";
import type { StopReason } from "../jobs/job.js";
import type { JobContext, JobOutcome } from "../jobs/manager.js";
import type { ChildExit, ReplChild, ReplRequest } from "../repl/index.js";
import { ndjsonLine } from "../repl/index.js";
import { type DoneMessage, type DriverMessage, displayOf, doneOf } from "./messages.js";
import { DEFAULT_OUTPUT_LIMITS, RunOutputs, runFilesDir } from "./outputs.js";

/** The job kind of a run. */
export const CODE_RUN_KIND = "code";

/** What the daemon asks of the driver per run (PROTOCOL.md): values over `maxInlineBytes` go to files, lines stay under `maxLineBytes`. */
export const RUN_BOUNDS = {
  maxInlineBytes: DEFAULT_OUTPUT_LIMITS.inlineBytes,
  maxLineBytes: 1024 * 1024,
  maxRunBytes: 32 * 1024 * 1024,
};

/** Why the state of a context is gone, told on the run that first sees it (and then never again). */
export interface RestartNote {
  reason: string;
  /** The names lost; absent when they are not known (the daemon restarted). */
  lost?: string[];
  lostTotal?: number;
}

/** What a run needs of its context. */
export interface RunHost {
  readonly id: string;
  readonly language: CodeLanguage;
  /** The context's generation now (the one the run executes in). */
  readonly generation: number;
  /** The run's number in its interpreter: the last run's + 1. */
  readonly nextExecutionCount: number;
  /** The state the interpreter holds now, which a restart loses. */
  lostNow(): RestartNote;
  /** Whether the context is being removed (a run it ends is not restarted). */
  readonly removing: boolean;
  /** Why the interpreter ended, once the context has none. */
  readonly stopped: { reason: string } | undefined;
  /** Why the job is being stopped (cancel, timeout), if it is. */
  stopReason(job: string): StopReason | undefined;
  /** The run ended with `done`: the interpreter's names and count after it. */
  ran(done: DoneMessage): void;
  /** A fresh interpreter replaces the current one (its names and count start over). */
  replaced(): void;
  /** Ends the repeated interrupt of a stopping run (see CodeContext's stopper). */
  stopInterrupting(): void;
}

const TITLE_MAX = 200;

function titleOf(code: string): string {
  const first = code.trim().split("\n", 1)[0] ?? "";
  const title = code.trim().includes("\n") ? `${first} …` : first;
  return title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX - 1)}…` : title || "(empty)";
}

/**
 * One `code.run` as a request to the context's driver: the run message, then its displays and its
 * `done` mapped onto the run's result — the job's `result`, whatever way the run ends (the driver's
 * answer, a timeout, a kill and restart, an interpreter that died).
 */
export class CodeRun {
  private outputs: RunOutputs | undefined;
  private count = 0;
  /** A restart that happened before this run (idle timeout, an exit) and that this run reports. */
  private note: RestartNote | undefined;

  constructor(
    private readonly host: RunHost,
    private readonly code: string,
    private readonly options: { timeoutMs?: number; key?: string; note?: RestartNote },
  ) {
    this.note = options.note;
  }

  request(): ReplRequest<DriverMessage> {
    return {
      kind: CODE_RUN_KIND,
      title: titleOf(this.code),
      params: { context: this.host.id, code: this.code, timeoutMs: this.options.timeoutMs },
      key: this.options.key,
      timeoutMs: this.options.timeoutMs,
      send: (child, job) => this.send(child, job),
      message: (message, job) => this.message(message, job),
      exited: (exit, job) => this.exited(exit, job),
      restarted: (generation, job) => this.restarted(generation, job),
      finish: (outcome, job) => this.finish(outcome, job),
    };
  }

  private send(child: ReplChild, job: JobContext): void {
    job.annotate({ context: this.host.id });
    this.count = this.host.nextExecutionCount;
    const dir = runFilesDir(job.dir);
    this.outputs = new RunOutputs(dir, `${job.id}-d`);
    child.requests.write(ndjsonLine({ type: "run", id: job.id, code: this.code, filesDir: dir, ...RUN_BOUNDS }));
  }

  private message(message: DriverMessage, job: JobContext): JobOutcome | undefined {
    const display = displayOf(message, job.id);
    if (display) {
      this.outputs?.add("display", display);
      return undefined;
    }
    const done = doneOf(message, job.id);
    if (!done) return undefined;
    this.host.stopInterrupting();
    if (done.result) this.outputs?.add("result", done.result);
    this.count = done.executionCount || this.count;
    this.host.ran(done);
    const result = this.result(this.statusOf(done.status, job.id), this.host.generation);
    if (done.error) result.error = done.error;
    const omitted = this.outputs?.omittedList(done.omitted) ?? done.omitted;
    if (omitted.length) result.omitted = omitted;
    return { ok: true, result };
  }

  /** The interpreter exited under the run, not by the daemon's hand: a fresh one replaces it at once, and the result says so. */
  private exited(exit: ChildExit, job: JobContext): JobOutcome | { outcome: JobOutcome; restart: string } {
    this.host.stopInterrupting();
    const how = exit.error ?? (exit.exitCode !== undefined ? `exit code ${exit.exitCode}` : `signal ${exit.signal}`);
    if (this.host.removing) {
      const result = this.result("interrupted", this.host.generation);
      result.error = { name: "ContextRemoved", value: "the context was removed (code.context.remove) during the run", traceback: [] };
      return { ok: true, result };
    }
    const reason = `the interpreter exited during the run (${how})`;
    const result = this.restartedResult(this.host.generation + 1, reason);
    result.status = "error";
    result.error = { name: "InterpreterExited", value: reason, traceback: [] };
    return { outcome: { ok: true, result }, restart: `${reason}, in job ${job.id}` };
  }

  /** The run did not end within the grace after its interrupt: the interpreter was killed and a fresh one started. */
  private restarted(_replGeneration: number, job: JobContext): JobOutcome {
    const reason =
      "the run did not stop within the grace after SIGINT, so its interpreter (and every process it started) was killed and a fresh one started";
    const result = this.restartedResult(this.host.generation + 1, reason);
    result.status = this.host.stopReason(job.id) === "timed_out" ? "timed_out" : "interrupted";
    return { ok: true, result };
  }

  /** Every run ends with a result, also one whose interpreter went away without a word (protocol error, removal). */
  private finish(outcome: JobOutcome, job: JobContext): JobOutcome {
    this.host.stopInterrupting();
    if (outcome.ok && outcome.result) return outcome;
    const ended = this.host.stopped?.reason;
    const why = outcome.ok
      ? "the interpreter ended without answering"
      : (outcome.error?.message ??
        (ended
          ? `the interpreter ended: ${ended}`
          : `the interpreter ended (${outcome.signal ?? `exit code ${outcome.exitCode ?? "?"}`})`));
    const result = this.result(this.statusOf("error", job.id), this.host.generation);
    result.error = { name: "InterpreterExited", value: why, traceback: [] };
    return { ok: true, result };
  }

  private restartedResult(generation: number, reason: string): CodeRunResult {
    const lost = this.host.lostNow();
    this.host.replaced();
    const result = this.result("error", generation);
    this.note = undefined; // this run's own restart says everything a note would
    return {
      ...result,
      contextRestarted: true,
      restartReason: reason,
      lost: lost.lost ?? [],
      ...(lost.lostTotal ? { lostTotal: lost.lostTotal } : {}),
    };
  }

  private statusOf(status: DoneMessage["status"], job: string): CodeRunResult["status"] {
    if (status === "ok") return "ok";
    const stop = this.host.stopReason(job);
    if (stop === "timed_out") return "timed_out";
    if (stop === "cancelled") return "interrupted";
    return status;
  }

  private result(status: CodeRunResult["status"], generation: number): CodeRunResult {
    const result: CodeRunResult = {
      status,
      outputs: this.outputs?.outputs ?? [],
      executionCount: this.count,
      context: this.host.id,
      language: this.host.language,
      generation,
    };
    if (this.note) {
      result.contextRestarted = true;
      result.restartReason = this.note.reason;
      if (this.note.lost) result.lost = this.note.lost;
      if (this.note.lostTotal) result.lostTotal = this.note.lostTotal;
    }
    return result;
  }
}

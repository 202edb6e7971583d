import { EventEmitter } from "node:events";
import { FINAL_STATES, type JobState, type JobStatus, type JobUsage, type OutputStream, type Progress } from "../../protocol/common.js";
import type { WireError } from "../../protocol/errors.js";
import type { OutputLog } from "./output-log.js";

/** Why the daemon ended a job early; "shutdown" ends it `lost`, "output_failed" ends it `failed`. */
export type StopReason = "cancelled" | "timed_out" | "shutdown" | "output_failed";

/** What a running job's runner lets the outside do to it (process and terminal jobs fill this in). */
export interface JobControl {
  /** The leader of the job's process group. */
  pid?: number;
  /** Resolves with the bytes the job took, -1 when it has no open input. */
  input?(data: Buffer, eof: boolean, timeoutMs: number): Promise<number>;
  resize?(cols: number, rows: number): void;
  /** Signals the job's whole process group. */
  kill?(signal: NodeJS.Signals): void;
  /** Stops reading the job's output until resume (its terminal, for a viewer whose window is full). */
  pause?(): void;
  resume?(): void;
}

/** What annotate leaves alone: the fields the job's life and identity are made of. */
const RESERVED_FIELDS = new Set([
  "id",
  "kind",
  "title",
  "state",
  "createdAt",
  "startedAt",
  "endedAt",
  "exitCode",
  "signal",
  "outputBytes",
  "omittedBytes",
  "error",
  "result",
  "key",
  "pid",
  "paramsHash",
  "progress",
]);

/** The persisted shape of a job (job.json): its status plus what idempotency needs. */
export interface JobRecord extends JobStatus {
  paramsHash?: string;
}

/**
 * One job: its status, its output log, and an emitter for followers. Its record changes only
 * through the methods below, which move it forward and never back.
 * Events: "output" (stream, offset, bytes), "state", "progress", "end", and "evicted" when
 * retention deletes it.
 */
export class Job extends EventEmitter {
  readonly abort = new AbortController();
  log: OutputLog | undefined;
  /** Set when its output could not be written (a full disk): later output is dropped, and the job fails with it. */
  outputError: WireError | undefined;
  #control: JobControl = {};
  /** What its processes use while it runs, as the sampler last reported; the record keeps the final figure. */
  #liveUsage: JobUsage | undefined;
  #stopReason: StopReason | undefined;
  readonly #record: JobRecord;

  constructor(
    record: JobRecord,
    readonly dir: string,
  ) {
    super();
    this.#record = record;
    this.setMaxListeners(0);
  }

  /** The persisted fields, read-only: see transition, attach, setProgress. */
  get record(): Readonly<JobRecord> {
    return this.#record;
  }

  /** What its runner lets the outside do to it; empty until the runner attaches. */
  get control(): JobControl {
    return this.#control;
  }

  /** The first cause of termination wins (cancel vs timeout vs shutdown vs natural end). */
  get stopReason(): StopReason | undefined {
    return this.#stopReason;
  }

  /** Notes why the daemon is ending it; a later cause never overrides the first. */
  requestStop(reason: StopReason): void {
    this.#stopReason ??= reason;
  }

  /** Takes its runner's control, noting the process group so that after a crash the next daemon can stop it. */
  attach(control: JobControl): void {
    this.#control = control;
    if (control.pid !== undefined) this.#record.pid = control.pid;
  }

  get id(): string {
    return this.record.id;
  }

  get state(): JobState {
    return this.record.state;
  }

  get finished(): boolean {
    return FINAL_STATES.includes(this.record.state);
  }

  /** Moves the state forward only; returns false (and changes nothing) for a regression. */
  transition(to: JobState, fields: Partial<JobRecord> = {}): boolean {
    if (this.finished) return false;
    if (to === "queued") return false;
    if (to === this.record.state) return false;
    Object.assign(this.#record, fields, { state: to });
    // A finished job's progress is final: one that succeeded did all of it (the last report may be
    // a phase it left long ago); one that failed or was cancelled keeps where it stopped.
    const progress = this.#record.progress;
    if (to === "succeeded" && progress) {
      const total = progress.total ?? progress.done;
      this.#record.progress = { ...progress, phase: "done", done: total, total, message: "" };
    }
    this.emit("state", to);
    return true;
  }

  /** The sampler's latest figure for a running job (no event: watchers see it with the next change). */
  reportUsage(usage: JobUsage): void {
    if (!this.finished) this.#liveUsage = usage;
  }

  /** Its usage: final once it ended, else the latest sample; undefined for a job without processes. */
  get usage(): JobUsage | undefined {
    return this.#record.usage ?? this.#liveUsage;
  }

  /**
   * Fields a running job's runner adds to its status (a session command's `session` and `cwd`,
   * `awaitingInput` and `lastLine`); never the fields the job's life is made of. An annotation that
   * sets `awaitingInput` emits "awaiting", which ends waits for the job (jobs.wait) early.
   */
  annotate(fields: Record<string, unknown>): void {
    if (this.finished) return;
    for (const [name, value] of Object.entries(fields)) {
      if (RESERVED_FIELDS.has(name)) continue;
      if (value === undefined) delete (this.#record as unknown as Record<string, unknown>)[name];
      else (this.#record as unknown as Record<string, unknown>)[name] = value;
    }
    if (fields.awaitingInput === true) this.emit("awaiting");
  }

  setProgress(progress: Progress): void {
    this.#record.progress = progress;
    this.emit("progress", progress);
  }

  /** The public status: outputBytes always reflects the live log. */
  status(): JobStatus {
    const { paramsHash: _hash, ...status } = this.#record;
    if (!status.usage && this.#liveUsage) status.usage = this.#liveUsage;
    if (this.log) {
      status.outputBytes = this.log.size;
      const omitted = this.log.omittedBytes;
      if (omitted > 0) status.omittedBytes = omitted;
    }
    return status;
  }

  /**
   * Appends to the log, then tells live followers. Bytes someone sees are on disk first (a follower
   * that reconnects after a daemon crash finds them); unseen ones are staged (see OutputLog.append).
   */
  writeOutput(stream: OutputStream, data: Buffer): void {
    if (!this.log || data.length === 0 || this.outputError) return;
    const live = this.listenerCount("output") > 0;
    const offset = this.log.append(stream, data, live);
    if (live) this.emit("output", stream, offset, data);
  }
}

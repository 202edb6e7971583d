import { EventEmitter } from "node:events";
import type { JobState, JobStatus, Progress } from "../../protocol/common.js";
import type { ProgressUpdate } from "../runners/context.js";
import { newJobId } from "./ids.js";
import { Job, type StopReason } from "./job.js";
import { OutputLog } from "./output-log.js";
import { Deadlines } from "./deadlines.js";
import { JobStore } from "./store.js";
import { defaultOutputBudget } from "./output-budget.js";
import { Retention } from "./retention.js";
import { noteShortLivedBytes } from "../util/young-gc.js";
import { isProcessStartedAt, signalGroup } from "../process/index.js";
import { endOf } from "./manager/outcome.js";
import { runJob } from "./manager/run.js";
import { keyedJob, newRecord } from "./manager/start.js";
import { stopJob } from "./manager/stop.js";
import { type JobSort, JobTable } from "./manager/table.js";
import type { JobManagerOptions, JobOutcome, StartJobOptions, UsageMeter } from "./manager/types.js";
import { outputStats } from "./output-stats.js";
import { waitForEnd } from "./manager/wait.js";

export type { JobContext, JobManagerOptions, JobOutcome, StartJobOptions, UsageMeter } from "./manager/types.js";

const TIMEOUT_GRACE_MS = 2000;
const PROGRESS_PERSIST_MS = 1000;

/**
 * The job table: starts jobs (queueing past the running limit), drives them to their end through
 * Job's transitions, and persists them; Retention decides which finished ones are kept. Emits
 * "activity" whenever anything happens (idle tracking). Its parts are in ./manager/: the table and
 * its keys (table.ts), a start's key and record (start.ts), running a runner (run.ts), stopping
 * (stop.ts), the end state (outcome.ts) and waits (wait.ts); this class holds the order.
 */
export class JobManager extends EventEmitter {
  private readonly jobs: JobTable;
  private readonly queue: Array<{ job: Job; options: StartJobOptions }> = [];
  private running = 0;
  private readonly maxRunning: number;
  private readonly store: JobStore;
  private readonly retention: Retention;
  private readonly deadlines = new Deadlines();
  private usageMeter: UsageMeter | undefined;

  constructor(private readonly options: JobManagerOptions) {
    super();
    this.setMaxListeners(0); // one listener per watching connection
    this.jobs = new JobTable(options.retainJobs);
    this.maxRunning = options.maxRunningJobs ?? 256;
    this.store = new JobStore(options.dir, options.log, OutputLog.INITIAL_FILES);
    const budget = options.outputBudgetBytes || defaultOutputBudget(options.dir, options.outputCapBytes);
    this.retention = new Retention(
      options.retainJobs,
      budget,
      () => this.jobs.values(),
      (job) => this.evict(job),
    );
  }

  /** Where process jobs' final usage comes from (the metrics sampler); none: jobs end without one. */
  setUsageMeter(meter: UsageMeter | undefined): void {
    this.usageMeter = meter;
  }

  /** Running jobs that have a process (their control has its pid): what the usage sampler samples. */
  *runningProcessJobs(): Generator<Job> {
    for (const job of this.jobs.values()) if (job.state === "running" && job.control.pid !== undefined) yield job;
  }

  /** A kept job, or undefined (get throws instead). */
  find(id: string): Job | undefined {
    return this.jobs.find(id);
  }

  /** Jobs kept, by kind and state: `kind` → state → count (the metrics' gauge; kinds are the daemon's own names). */
  countsByKind(): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>();
    for (const job of this.jobs.values()) {
      let states = out.get(job.record.kind);
      if (!states) out.set(job.record.kind, (states = new Map()));
      states.set(job.state, (states.get(job.state) ?? 0) + 1);
    }
    return out;
  }

  /** Bytes of output all kept jobs may hold together. */
  get outputBudgetBytes(): number {
    return this.retention.outputBudgetBytes;
  }

  /** Bytes of output (with its run index) kept on disk by all jobs, finished or not. */
  outputBytesUsed(): number {
    return this.retention.outputBytesUsed();
  }

  /** Loads persisted jobs; any that were queued or running when the daemon died become `lost`. */
  restore(): void {
    void this.store.spares.start();
    const restored: Job[] = [];
    for (const record of this.store.loadAll().sort((a, b) => (a.id < b.id ? -1 : 1))) {
      const job = new Job(record, this.store.jobDir(record.id));
      job.log = OutputLog.open(job.dir, this.options.outputCapBytes);
      if (!job.finished) {
        // Its processes outlived the daemon that ran them; stop exactly that group.
        if (record.pid !== undefined && record.startedAt !== undefined && isProcessStartedAt(record.pid, record.startedAt))
          signalGroup(record.pid, "SIGKILL");
        job.transition("lost", {
          endedAt: new Date().toISOString(),
          pid: undefined,
          error: { code: "unavailable", message: "the daemon stopped while this job was running; its output up to then is kept" },
        });
        this.persist(job);
      }
      this.jobs.add(job);
      restored.push(job);
    }
    this.retention.restored(restored);
  }

  /** Starts (or, for a reused key with equal parameters, returns) a job. */
  start(options: StartJobOptions): Job {
    const { reused, paramsHash } = keyedJob(this.jobs, options);
    if (reused) return reused;
    const id = newJobId();
    const dir = this.store.jobDir(id);
    const record = newRecord(id, options, paramsHash);
    const job = new Job(record, dir);
    job.log = OutputLog.create(dir, this.options.outputCapBytes, (d) => this.store.spares.materialize(d));
    job.log.onWriteError = (err) => this.outputFailed(job, err);
    this.jobs.add(job);
    this.emit("activity");
    const runNow = this.running < this.maxRunning;
    if (runNow) {
      job.transition("running", { startedAt: record.createdAt });
      this.announce(job);
      // A process job spawns synchronously inside execute and its record (with the pid the next
      // daemon needs to stop the group) is written right then: one journal write after the spawn
      // instead of one before it and one after. Nobody hears of the job before this returns, and a
      // crash between spawn and that write was already possible between spawn and the pid's write.
      this.execute(job, options);
      if (!this.store.has(id)) this.store.save({ ...job.record }); // a job that spawned nothing (yet)
    } else {
      this.store.save({ ...job.record });
      this.announce(job);
      this.queue.push({ job, options });
    }
    return job;
  }

  /** Tells jobs.watch about a new job, and relays its changes: one subscription sees every job without a listener per job. */
  private announce(job: Job): void {
    job.on("state", () => this.emit("job.state", job));
    job.on("progress", () => this.emit("job.progress", job));
    this.emit("job.created", job);
  }

  get(id: string): Job {
    return this.jobs.get(id);
  }

  list(filter: { state?: JobState | JobState[]; kind?: string; limit?: number; before?: string; sort?: JobSort }): {
    jobs: JobStatus[];
    more: boolean;
  } {
    return this.jobs.list(filter);
  }

  /** Resolves when the job ends or at the timeout, whichever is first; never affects the job. */
  wait(id: string, timeoutMs: number): Promise<{ job: JobStatus; timedOut: boolean }> {
    return waitForEnd(this.get(id), timeoutMs, this.deadlines);
  }

  /** Cancels a job: signal to its process group, SIGKILL after the grace. Idempotent on ended jobs. */
  cancel(id: string, signal: NodeJS.Signals = "SIGTERM", graceMs = 5000): JobStatus {
    const job = this.get(id);
    this.stop(job, "cancelled", signal, graceMs);
    return job.status();
  }

  counts(): Record<string, number> {
    return this.jobs.counts();
  }

  /** Number of jobs queued or running. */
  get active(): number {
    return this.running + this.queue.length;
  }

  /** On daemon shutdown: stop every live job so none is orphaned, and record it as lost. */
  async shutdown(graceMs = 2000): Promise<void> {
    const live = [...this.jobs.values()].filter((j) => !j.finished);
    const ended = live.map((job) => new Promise<void>((resolve) => (job.finished ? resolve() : job.once("end", () => resolve()))));
    for (const job of live) this.stop(job, "shutdown", "SIGTERM", graceMs);
    await Promise.race([Promise.all(ended), new Promise((r) => setTimeout(r, graceMs + 1000))]);
    await this.store.spares.stop();
  }

  /** Ends a job early: `signal` to its process group, SIGKILL (and its abort signal) after the grace. */
  private stop(job: Job, reason: StopReason, signal: NodeJS.Signals, graceMs: number): void {
    stopJob(job, reason, signal, graceMs, (queued) => {
      const index = this.queue.findIndex((q) => q.job === queued);
      if (index >= 0) this.queue.splice(index, 1);
      this.finish(queued, { ok: false });
    });
  }

  private output(job: Job, stream: "stdout" | "stderr" | "pty", data: Buffer | string): void {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    try {
      job.writeOutput(stream, bytes);
    } catch (err) {
      this.outputFailed(job, err as NodeJS.ErrnoException);
      return;
    }
    this.retention.wrote(bytes.length);
    outputStats.writtenBytes += bytes.length;
    noteShortLivedBytes(bytes.length);
    this.emit("activity");
  }

  private execute(job: Job, options: StartJobOptions): void {
    this.running++;
    if (job.state === "queued") {
      job.transition("running", { startedAt: new Date().toISOString() });
      this.persist(job);
    }
    runJob(job, options, this.options.log, {
      output: (stream, data) => this.output(job, stream, data),
      progress: (update) => this.updateProgress(job, update),
      attached: (control) => {
        if (control.pid !== undefined) this.persist(job); // so that after a crash the next daemon can stop its group
      },
      timedOut: () => this.stop(job, "timed_out", "SIGTERM", TIMEOUT_GRACE_MS),
      settled: (outcome) => this.finish(job, outcome),
    });
  }

  /**
   * The job's output could not be written (ENOSPC, EDQUOT, EIO…): the job cannot keep the promise
   * that its output is never lost, so it is stopped and fails with the reason; the daemon goes on.
   */
  private outputFailed(job: Job, err: NodeJS.ErrnoException): void {
    if (job.outputError) return;
    const full = err.code === "ENOSPC" || err.code === "EDQUOT";
    job.outputError = {
      code: "unavailable",
      message: full
        ? `the disk holding ${this.options.dir} is full (${err.code}), so this job's output could not be kept and the job was stopped; free space there (or lower --output-budget) and run it again`
        : `this job's output could not be written to ${job.dir} (${err.code ?? err.message}), so the job was stopped`,
      details: { errno: err.code ?? "unknown", outputBytes: job.log?.size ?? 0 },
    };
    this.options.log.error({ err, job: job.id }, "job output write failed; stopping the job");
    this.stop(job, "output_failed", "SIGTERM", TIMEOUT_GRACE_MS);
  }

  private finish(job: Job, outcome: JobOutcome): void {
    if (job.finished) return; // ends exactly once
    try {
      job.log?.flush(); // before the outcome is decided: output that cannot be written fails the job
    } catch (err) {
      this.outputFailed(job, err as NodeJS.ErrnoException);
    }
    const wasRunning = job.state === "running";
    const { state, fields } = endOf(job, outcome);
    if (wasRunning && job.control.pid !== undefined) {
      try {
        const usage = this.usageMeter?.finalUsage(job);
        if (usage) fields.usage = usage;
      } catch (err) {
        this.options.log.warn({ err, job: job.id }, "could not read the job's final usage");
      }
    }
    try {
      job.log?.close();
    } catch (err) {
      // Only the run index's last record is lost; a log opened later attributes the rest to the last stream.
      this.options.log.warn({ err, job: job.id }, "could not flush the job's run index");
    }
    job.transition(state, fields);
    this.persist(job);
    if (wasRunning) this.running--;
    job.emit("end");
    this.emit("activity");
    this.retention.add(job);
    const next = this.queue.shift();
    if (next) this.execute(next.job, next.options);
  }

  private readonly progressTimers = new WeakMap<Job, NodeJS.Timeout>();

  private updateProgress(job: Job, update: ProgressUpdate): void {
    const prev: Progress = job.record.progress ?? { phase: "", done: 0, total: null, unit: "", message: "" };
    job.setProgress({ ...prev, ...update } as Progress);
    this.emit("activity");
    if (this.progressTimers.has(job)) return;
    const timer = setTimeout(() => {
      this.progressTimers.delete(job);
      if (!job.finished) this.persist(job);
    }, PROGRESS_PERSIST_MS);
    timer.unref();
    this.progressTimers.set(job, timer);
  }

  private persist(job: Job): void {
    this.store.save({ ...job.record, ...job.status(), paramsHash: job.record.paramsHash }); // status() adds the live byte counts
  }

  /** Forgets a finished job: its record, its key, and (in the background) its output directory. */
  private evict(job: Job): void {
    this.jobs.delete(job);
    job.emit("evicted"); // followers still behind end now, before the files go
    this.emit("job.evicted", job); // and watchers forget it
    job.removeAllListeners();
    job.log?.releaseReaders();
    this.store.remove(job.id);
  }
}

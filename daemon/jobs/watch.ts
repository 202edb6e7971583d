import type { FollowSink } from "./follow.js";
import type { Job } from "./job.js";
import type { JobManager } from "./manager.js";

/** Jobs whose news waits for a slow client; bounded by the jobs the table keeps. */
type Pending = Map<Job, "created" | "state">;

/**
 * One connection's subscription to every job's life (jobs.watch): job.created, job.state (with
 * the whole status) and job.progress. A client that reads slowly is never queued for: the jobs
 * that changed meanwhile are remembered (one entry per job) and their current status is sent when
 * the connection drains, so the client's picture ends right even if progress ticks are skipped.
 */
export class JobWatcher {
  private readonly pending: Pending = new Map();
  private waitingForDrain = false;
  private closed = false;
  /** Until the jobs.watch reply is out, news is only noted (events never precede their reply). */
  private held = true;
  private readonly onCreated = (job: Job): void => this.note(job, "created");
  private readonly onState = (job: Job): void => this.note(job, "state");
  // A deleted job's news is moot; held, it would keep the whole job (and its log index) alive.
  private readonly onEvicted = (job: Job): void => void this.pending.delete(job);
  private readonly onProgress = (job: Job): void => {
    const progress = job.record.progress; // set before a job emits "progress"
    if (progress && !this.held && this.pending.size === 0 && this.sink.writable)
      this.sink.send({ event: "job.progress", job: job.id, progress });
    else this.note(job, "state");
  };

  constructor(
    private readonly jobs: JobManager,
    private readonly sink: FollowSink,
  ) {}

  start(): void {
    this.jobs.on("job.created", this.onCreated);
    this.jobs.on("job.state", this.onState);
    this.jobs.on("job.progress", this.onProgress);
    this.jobs.on("job.evicted", this.onEvicted);
  }

  /** Sends what was noted while held, then news as it happens. */
  release(): void {
    this.held = false;
    this.flush();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.jobs.off("job.created", this.onCreated);
    this.jobs.off("job.state", this.onState);
    this.jobs.off("job.progress", this.onProgress);
    this.jobs.off("job.evicted", this.onEvicted);
    this.pending.clear();
  }

  private note(job: Job, what: "created" | "state"): void {
    if (this.closed) return;
    if (!this.held && this.pending.size === 0 && this.sink.writable) return this.send(job, what);
    if (this.pending.get(job) !== "created") this.pending.set(job, what);
    if (!this.held) this.flushLater();
  }

  private send(job: Job, what: "created" | "state"): void {
    const status = job.status();
    this.sink.send(
      what === "created" ? { event: "job.created", job: job.id, status } : { event: "job.state", job: job.id, state: status.state, status },
    );
  }

  private flushLater(): void {
    if (this.waitingForDrain) return;
    this.waitingForDrain = true;
    this.sink.onDrain(() => {
      this.waitingForDrain = false;
      this.flush();
    });
  }

  private flush(): void {
    for (const [job, what] of this.pending) {
      if (this.closed) return;
      if (!this.sink.writable) return this.flushLater();
      this.pending.delete(job);
      this.send(job, what);
    }
  }
}

import type { Job } from "./job.js";

/** Output bytes (of all jobs) between two checks of the output budget. */
const BUDGET_CHECK_BYTES = 1024 * 1024;

/**
 * Which finished jobs are kept: the `retainJobs` that ended last, and only as many as fit in the
 * output budget. The job that ended first goes first; running jobs are never touched.
 */
export class Retention {
  /** Finished jobs in the order they ended (a Set iterates in insertion order): the eviction queue. */
  private readonly ended = new Set<Job>();
  private outputSinceBudgetCheck = 0;
  /** The last budget check could not get within the budget (running jobs, or the last one ended, hold it). */
  private overBudget = false;

  constructor(
    private readonly retainJobs: number,
    /** Bytes of output all kept jobs may hold together. */
    readonly outputBudgetBytes: number,
    /** Every job kept, finished or not (for the bytes they use). */
    private readonly jobs: () => Iterable<Job>,
    /** Forgets one finished job. */
    private readonly evict: (job: Job) => void,
  ) {}

  /** A job ended: it joins the queue, and the limits are applied. */
  add(job: Job): void {
    this.ended.add(job);
    this.enforce();
  }

  /** Jobs restored from disk, finished ones in the order they ended; then the limits are applied. */
  restored(finished: Job[]): void {
    for (const job of finished.sort((a, b) => endTime(a) - endTime(b))) this.ended.add(job);
    this.enforceRetention();
    this.enforceOutputBudget();
  }

  /** Output was written; every BUDGET_CHECK_BYTES the budget is applied (a running job's output grows the total). */
  wrote(bytes: number): void {
    this.outputSinceBudgetCheck += bytes;
    if (this.outputSinceBudgetCheck < BUDGET_CHECK_BYTES) return;
    this.outputSinceBudgetCheck = 0;
    this.enforceOutputBudget();
  }

  /** Bytes of output (with its run index) kept on disk by all jobs, finished or not. */
  outputBytesUsed(): number {
    let used = 0;
    for (const job of this.jobs()) used += job.log?.diskBytes ?? 0;
    return used;
  }

  private enforce(): void {
    this.enforceRetention();
    // Only output grows the bytes used: with none written since a check that ended within the
    // budget, it still holds (this spares a walk over every kept job at each job's end).
    if (this.outputSinceBudgetCheck === 0 && !this.overBudget) return;
    this.outputSinceBudgetCheck = 0;
    this.enforceOutputBudget();
  }

  /** Keeps the `retainJobs` finished jobs that ended last; the one that ended first goes first. */
  private enforceRetention(): void {
    for (const job of this.ended) {
      if (this.ended.size <= this.retainJobs) break;
      this.remove(job);
    }
  }

  /**
   * Keeps the output of all jobs within the budget by deleting finished jobs, the one that ended
   * first going first. The job that ended last is always kept (it is bounded by the per-job cap).
   */
  private enforceOutputBudget(): void {
    let used = this.outputBytesUsed();
    for (const job of this.ended) {
      if (used <= this.outputBudgetBytes || this.ended.size <= 1) break;
      used -= job.log?.diskBytes ?? 0;
      this.remove(job);
    }
    this.overBudget = used > this.outputBudgetBytes;
  }

  private remove(job: Job): void {
    this.ended.delete(job);
    this.evict(job);
  }
}

/** When a finished job ended, as epoch ms (a record without endedAt sorts first). */
function endTime(job: Job): number {
  const t = Date.parse(job.record.endedAt ?? "");
  return Number.isNaN(t) ? 0 : t;
}

import type { JobState, JobStatus } from "../../../protocol/common.js";
import { ActionError } from "../../../protocol/errors.js";
import type { Job } from "../job.js";

/** jobs.list's order: newest first, or most CPU / peak memory first (jobs without usage last, newest first among equals). */
export type JobSort = "newest" | "cpu" | "memory";

/** The jobs kept, by id, and the idempotency keys that name them. */
export class JobTable {
  private readonly jobs = new Map<string, Job>();
  private readonly keys = new Map<string, string>();

  /** `retainJobs`: how many finished jobs are kept (said in a not_found). */
  constructor(private readonly retainJobs: number) {}

  get size(): number {
    return this.jobs.size;
  }

  values(): IterableIterator<Job> {
    return this.jobs.values();
  }

  add(job: Job): void {
    this.jobs.set(job.id, job);
    if (job.record.key !== undefined) this.keys.set(job.record.key, job.id);
  }

  /** Forgets a job and its key (unless the key names another job by now). */
  delete(job: Job): void {
    this.jobs.delete(job.id);
    if (job.record.key && this.keys.get(job.record.key) === job.id) this.keys.delete(job.record.key);
  }

  /** The job a key was used for, if it is still kept. */
  byKey(key: string): Job | undefined {
    const id = this.keys.get(key);
    return id ? this.jobs.get(id) : undefined;
  }

  find(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  get(id: string): Job {
    const job = this.jobs.get(id);
    if (!job)
      throw new ActionError("not_found", `no job ${id}; jobs.list shows the jobs kept (the ${this.retainJobs} that finished last)`, {
        path: "/job",
      });
    return job;
  }

  /** jobs.list: newest first (or by usage), filtered, `limit` of them after `before`; `more` when others match. */
  list(filter: { state?: JobState | JobState[]; kind?: string; limit?: number; before?: string; sort?: JobSort }): {
    jobs: JobStatus[];
    more: boolean;
  } {
    const states = filter.state === undefined ? undefined : Array.isArray(filter.state) ? filter.state : [filter.state];
    const limit = filter.limit ?? 20;
    const sort = filter.sort ?? "newest";
    if (sort !== "newest" && filter.before !== undefined)
      throw new ActionError(
        "invalid_request",
        `before pages the newest-first order; with sort ${JSON.stringify(sort)} raise limit instead`,
        {
          path: "/before",
        },
      );
    let ids = [...this.jobs.keys()].sort().reverse();
    if (sort !== "newest") {
      const key = (id: string): number => {
        const usage = this.jobs.get(id)!.usage;
        return usage === undefined ? -1 : sort === "cpu" ? usage.cpuMs : usage.peakRssBytes;
      };
      // Stable: equal figures stay newest first.
      ids = ids
        .map((id) => ({ id, k: key(id) }))
        .sort((a, b) => b.k - a.k)
        .map((e) => e.id);
    }
    const out: JobStatus[] = [];
    let more = false;
    for (const id of ids) {
      if (filter.before !== undefined && id >= filter.before) continue;
      const job = this.jobs.get(id)!;
      if (states && !states.includes(job.state)) continue;
      if (filter.kind !== undefined && job.record.kind !== filter.kind) continue;
      if (out.length === limit) {
        more = true;
        break;
      }
      out.push(job.status());
    }
    return { jobs: out, more };
  }

  /** How many jobs are kept, in all and in each state. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = { total: this.jobs.size };
    for (const job of this.jobs.values()) counts[job.state] = (counts[job.state] ?? 0) + 1;
    return counts;
  }
}

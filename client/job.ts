import type { JobStatus, OutputStream } from "../protocol/common.js";
import type { ActionName, ParamsFor, ResultFor } from "../protocol/index.js";
import { FollowStream, type FollowHost, type FollowOptions } from "./follow.js";

/** The one thing a Job needs from its client. */
export interface JobHost extends FollowHost {
  request<N extends ActionName>(action: N, params: ParamsFor<N>): Promise<ResultFor<N>>;
}

/** jobs.wait accepts at most this per call; longer waits are several calls. */
const MAX_WAIT_MS = 600_000;
/** jobs.output's largest page. */
const PAGE_BYTES = 4 * 1024 * 1024;

/** A handle on one job of one daemon; every method is one or a few actions. */
export class Job {
  constructor(
    private readonly host: JobHost,
    readonly id: string,
  ) {}

  status(): Promise<JobStatus> {
    return this.host.request("jobs.status", { job: this.id });
  }

  /**
   * Resolves with the final status once the job has ended; with `timeoutMs`, with the current
   * status when that time has passed first (the job keeps running).
   */
  async wait(options: { timeoutMs?: number } = {}): Promise<JobStatus> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const timeoutMs = Math.max(0, Math.min(MAX_WAIT_MS, deadline - Date.now()));
      const { job, timedOut } = await this.host.request("jobs.wait", { job: this.id, timeoutMs });
      if (!timedOut || Date.now() >= deadline) return job;
    }
  }

  /** Signals the job's process group (jobs.cancel); resolves with its status. */
  cancel(options: Omit<ParamsFor<"jobs.cancel">, "job"> = {}): Promise<JobStatus> {
    return this.host.request("jobs.cancel", { ...options, job: this.id });
  }

  /**
   * The output log from `from` (default 0) up to what exists now, as one Buffer, read in pages
   * by `next`. Bytes the output cap dropped are skipped (the reply's `from` jumps past them).
   */
  async output(options: { from?: number; stream?: OutputStream } = {}): Promise<Buffer> {
    const pages: Buffer[] = [];
    let from = options.from ?? 0;
    for (;;) {
      const page = await this.host.request("jobs.output", {
        job: this.id,
        from,
        limit: PAGE_BYTES,
        ...(options.stream ? { stream: options.stream } : {}),
      });
      pages.push(Buffer.from(page.data, page.encoding === "base64" ? "base64" : "utf8"));
      if (page.eof || page.next === from) return Buffer.concat(pages);
      from = page.next;
    }
  }

  /** The job's events, resuming across dropped sockets; see FollowStream. */
  follow(options: FollowOptions = {}): FollowStream {
    return new FollowStream(this.host, this.id, options);
  }
}

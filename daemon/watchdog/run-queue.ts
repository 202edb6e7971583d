import { closeSync, openSync, readSync } from "node:fs";

/**
 * How long the main thread has waited, runnable, for a CPU: the second field of Linux's
 * /proc/self/task/<tid>/schedstat (run_delay, ns). Read from a file descriptor held open, a few
 * microseconds per read; undefined where the kernel does not report it.
 */
export class RunQueueClock {
  private fd: number | undefined;
  private readonly buffer = Buffer.alloc(96);

  constructor() {
    try {
      this.fd = openSync(`/proc/self/task/${process.pid}/schedstat`, "r");
    } catch {
      this.fd = undefined;
    }
  }

  /** Milliseconds waited on a run queue since the thread started, or undefined. */
  waitedMs(): number | undefined {
    if (this.fd === undefined) return undefined;
    try {
      const n = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
      const waited = Number(this.buffer.toString("latin1", 0, n).split(" ")[1]);
      return Number.isFinite(waited) ? waited / 1e6 : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

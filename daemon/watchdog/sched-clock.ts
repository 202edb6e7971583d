import { closeSync, openSync, readSync } from "node:fs";

/** The main thread's time on a CPU and waiting, runnable, for one, since it started (ms). */
export interface SchedTimes {
  cpuMs: number;
  waitedMs: number;
}

/**
 * The main thread's scheduler times: the first two fields of Linux's /proc/self/task/<tid>/schedstat
 * (sum_exec_runtime and run_delay, ns). Read from a file descriptor held open, a few microseconds
 * per read; undefined where the kernel does not report them.
 */
export class SchedClock {
  private fd: number | undefined;
  private readonly buffer = Buffer.alloc(96);

  constructor() {
    try {
      this.fd = openSync(`/proc/self/task/${process.pid}/schedstat`, "r");
    } catch {
      this.fd = undefined;
    }
  }

  read(): SchedTimes | undefined {
    if (this.fd === undefined) return undefined;
    try {
      const n = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
      const [cpu, waited] = this.buffer.toString("latin1", 0, n).split(" ").map(Number);
      return Number.isFinite(cpu) && Number.isFinite(waited) ? { cpuMs: cpu! / 1e6, waitedMs: waited! / 1e6 } : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

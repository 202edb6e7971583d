import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/** Scheduler times since the clock started (ms). */
export interface SchedTimes {
  /** The main thread on a CPU. */
  cpuMs: number;
  /** The main thread runnable, waiting for a CPU. */
  waitedMs: number;
  /** Every other thread of the daemon (V8's GC helpers, libuv's pool) runnable, waiting for a CPU, summed. */
  othersWaitedMs: number;
}

/** A schedstat line: three numbers. */
const SCHEDSTAT_BYTES = 96;

/** How often the list of threads is read again (threads come and go rarely). */
const RELIST_MS = 2000;

/**
 * The daemon's scheduler times: the first two fields of Linux's /proc/self/task/<tid>/schedstat
 * (sum_exec_runtime and run_delay, ns) of the main thread, and the run_delay of every other thread.
 * Each file is read from a descriptor held open, a few microseconds per read; undefined where the
 * kernel does not report them.
 */
export class SchedClock {
  private readonly fds = new Map<number, { fd: number; lastWaitedNs: number }>();
  private readonly buffer = Buffer.alloc(SCHEDSTAT_BYTES);
  private othersWaitedNs = 0;
  private listedAt = Number.NEGATIVE_INFINITY;

  read(): SchedTimes | undefined {
    const now = performance.now();
    if (now - this.listedAt >= RELIST_MS) this.relist(now);
    const main = this.fds.get(process.pid);
    const own = main && this.sample(main.fd);
    if (!own) return undefined;
    for (const [tid, thread] of this.fds) {
      if (tid === process.pid) continue;
      const times = this.sample(thread.fd);
      if (!times) {
        this.drop(tid);
        continue;
      }
      this.othersWaitedNs += Math.max(0, times.waitedNs - thread.lastWaitedNs);
      thread.lastWaitedNs = times.waitedNs;
    }
    return { cpuMs: own.cpuNs / 1e6, waitedMs: own.waitedNs / 1e6, othersWaitedMs: this.othersWaitedNs / 1e6 };
  }

  close(): void {
    for (const tid of [...this.fds.keys()]) this.drop(tid);
  }

  private relist(now: number): void {
    this.listedAt = now;
    let tids: number[];
    try {
      tids = readdirSync("/proc/self/task").map(Number).filter(Number.isInteger);
    } catch {
      return;
    }
    const alive = new Set(tids);
    for (const tid of [...this.fds.keys()]) if (!alive.has(tid)) this.drop(tid);
    for (const tid of tids) {
      if (this.fds.has(tid)) continue;
      try {
        const fd = openSync(`/proc/self/task/${tid}/schedstat`, "r");
        // A thread seen for the first time counts from now: its wait before is not in any turn watched.
        this.fds.set(tid, { fd, lastWaitedNs: this.sample(fd)?.waitedNs ?? 0 });
      } catch {
        // The thread ended between the listing and the open, or the kernel has no schedstat.
      }
    }
  }

  private sample(fd: number): { cpuNs: number; waitedNs: number } | undefined {
    return readSchedstat(fd, this.buffer);
  }

  private drop(tid: number): void {
    const thread = this.fds.get(tid);
    this.fds.delete(tid);
    if (thread) {
      try {
        closeSync(thread.fd);
      } catch {
        // Already closed.
      }
    }
  }
}

/** The first two fields of a schedstat file (sum_exec_runtime, run_delay; ns); undefined when unreadable. */
function readSchedstat(fd: number, buffer: Buffer): { cpuNs: number; waitedNs: number } | undefined {
  try {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const [cpu, waited] = buffer.toString("latin1", 0, n).split(" ").map(Number);
    return Number.isFinite(cpu) && Number.isFinite(waited) ? { cpuNs: cpu!, waitedNs: waited! } : undefined;
  } catch {
    return undefined;
  }
}

let mainThreadFd: number | null | undefined;
const mainThreadBuffer = Buffer.alloc(SCHEDSTAT_BYTES);

/** The main thread's scheduler times since it started (ms): on a CPU, and runnable waiting for one; undefined where the kernel does not report them. */
export function mainThreadTimes(): { cpuMs: number; waitedMs: number } | undefined {
  if (mainThreadFd === undefined) {
    try {
      mainThreadFd = openSync(`/proc/self/task/${process.pid}/schedstat`, "r");
    } catch {
      mainThreadFd = null;
    }
  }
  const times = mainThreadFd === null ? undefined : readSchedstat(mainThreadFd, mainThreadBuffer);
  return times && { cpuMs: times.cpuNs / 1e6, waitedMs: times.waitedNs / 1e6 };
}

/**
 * The main thread's time runnable but waiting for a CPU since it started (ms; 0 where the kernel
 * does not report it): what a caller timing its own synchronous work subtracts on a busy machine.
 */
export function mainThreadRunQueueMs(): number {
  return mainThreadTimes()?.waitedMs ?? 0;
}

/** Another process's (its main thread's) time runnable but waiting for a CPU since it started (ms); undefined when unreadable. */
export function processRunQueueMs(pid: number): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/schedstat`, "r");
    const times = readSchedstat(fd, mainThreadBuffer);
    return times && times.waitedNs / 1e6;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

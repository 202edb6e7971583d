import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import type { Logger } from "pino";
import { childrenRunQueueMs } from "./child-wait.js";
import { SchedClock, type SchedTimes } from "./sched-clock.js";
import { type Blame, type WorkTracker, work } from "./work.js";

/** A turn the daemon itself spends longer than this is a stall: logged at warn, counted in state.info. */
export const STALL_MS = 100;
/** The delay histogram's sampling interval (its timer wakes the loop this often). */
const RESOLUTION_MS = 20;
/** The watchdog's own check interval: how late its timer fires is how long the turn before it ran. */
const TICK_MS = 50;

/** state.info's `eventLoop`. */
export interface EventLoopReport {
  since: string;
  maxMs: number;
  p99Ms: number;
  stalls: number;
  worstStall?: { busyMs: number; cause: string; at: string };
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

/**
 * The daemon's measure of its own event loop. monitorEventLoopDelay gives the delay histogram
 * (maxMs, p99Ms: every late turn, whatever the cause); a timer of its own finds each late turn as
 * it ends, asks the work tracker whom to blame, and counts it as a stall only for the part the
 * daemon itself spent: the lateness minus the time its main thread waited, runnable, for a CPU
 * (schedstat's run_delay). On a loaded machine a turn is often late because the daemon was
 * descheduled, not because it worked; that wait is not the daemon's fault and is subtracted.
 * Time blocked in a synchronous syscall (a sync fs call waiting on disk) is *not* subtracted: the
 * thread was not waiting for a CPU, every client waited on it, so it is a stall like CPU work.
 * (Comparing CPU used with the wall gap would excuse those; schedstat tells the two apart.)
 * One exception: the main thread blocked while the daemon's other threads waited for a CPU (V8's
 * GC helpers it joins, starved on the same loaded CPU) waited for a CPU too, through them; that
 * blocked time is excused up to the other threads' run-queue wait in the same turn. Likewise the
 * time it was blocked in a spawn while the new child waited for a CPU to exec (child-wait.ts).
 * What stays as noise: a virtual machine's vCPU stolen by its host looks like work to the guest.
 */
export class LoopWatch {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly sched = new SchedClock();
  private timer: NodeJS.Timeout | undefined;
  private since = new Date();
  private lastTick = 0;
  private lastSched: SchedTimes | undefined;
  private lastChildrenWaited = 0;
  private stalls = 0;
  private worst: EventLoopReport["worstStall"];

  constructor(
    private readonly log: Logger,
    private readonly tracker: WorkTracker = work,
  ) {}

  /** Starts measuring (at listening: start-up work is not a client's wait). */
  start(): void {
    this.since = new Date();
    this.histogram.enable();
    this.lastTick = performance.now();
    this.lastSched = this.sched.read();
    this.lastChildrenWaited = childrenRunQueueMs();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
    this.sched.close();
  }

  report(): EventLoopReport {
    const delay = (ns: number): number => (this.histogram.count ? round(Math.max(0, ns / 1e6 - RESOLUTION_MS)) : 0);
    return {
      since: this.since.toISOString(),
      maxMs: delay(this.histogram.max),
      p99Ms: delay(this.histogram.percentile(99)),
      stalls: this.stalls,
      ...(this.worst ? { worstStall: this.worst } : {}),
    };
  }

  private tick(): void {
    const now = performance.now();
    const sched = this.sched.read();
    const childrenWaited = childrenRunQueueMs();
    const lateMs = now - this.lastTick - TICK_MS;
    if (lateMs >= STALL_MS) {
      const before = this.lastSched;
      const queuedMs = sched && before ? Math.max(0, sched.waitedMs - before.waitedMs) : 0;
      const cpuMs = sched && before ? sched.cpuMs - before.cpuMs : undefined;
      const othersQueuedMs = sched && before ? sched.othersWaitedMs - before.othersWaitedMs : 0;
      const blockedMs = Math.max(0, lateMs - queuedMs - (cpuMs ?? lateMs));
      const childrenQueuedMs = childrenWaited - this.lastChildrenWaited;
      const busyMs = Math.max(0, lateMs - queuedMs - Math.min(blockedMs, othersQueuedMs + childrenQueuedMs));
      const waits = { queuedMs, othersQueuedMs, childrenQueuedMs };
      this.late(lateMs, busyMs, waits, cpuMs, this.tracker.blame(this.lastTick, busyMs));
    } else {
      this.tracker.reset();
    }
    this.lastTick = now;
    this.lastSched = sched;
    this.lastChildrenWaited = childrenWaited;
  }

  private late(
    lateMs: number,
    busyMs: number,
    waits: { queuedMs: number; othersQueuedMs: number; childrenQueuedMs: number },
    cpuMs: number | undefined,
    blame: Blame,
  ): void {
    // cpuMs (the main thread on a CPU) is for the reader: busyMs minus it was spent blocked (or, in a VM, stolen).
    const cpu = cpuMs === undefined ? {} : { cpuMs: round(cpuMs) };
    const queues = {
      runQueueMs: round(waits.queuedMs),
      otherThreadsRunQueueMs: round(waits.othersQueuedMs),
      childrenRunQueueMs: round(waits.childrenQueuedMs),
    };
    const record = { ms: round(lateMs), busyMs: round(busyMs), ...queues, ...cpu, ...blame };
    if (busyMs < STALL_MS) {
      this.log.debug(record, "event loop late: the daemon waited for a CPU");
      return;
    }
    this.stalls++;
    if (!this.worst || busyMs > this.worst.busyMs) this.worst = { busyMs: round(busyMs), cause: blame.cause, at: new Date().toISOString() };
    this.log.warn(record, "event loop stalled");
  }
}

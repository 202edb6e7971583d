import { opendirSync, readdirSync } from "node:fs";
import { type Work, work } from "../watchdog/work.js";

/** Below this many processes (at the last count) /proc is listed in one read. */
const FEW_PIDS = 4096;

/** The most one turn of the event loop spends on sampling before it lets others run. */
export const SLICE_MS = 2;

/** CPU time this process has used, in ms (all its threads: during a slice, the main thread's work). */
function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/**
 * Cuts synchronous work into slices of at most SLICE_MS, with a turn of the event loop between
 * them, and adds up the CPU the slices took: the sampler's own cost (CPU, not wall time, so a
 * machine busy elsewhere does not make the sampler look dear). `check()` is cheap (a
 * performance.now() every few calls), so callers call it once per item.
 */
export class Slicer {
  /** CPU milliseconds spent in slices so far. */
  spentMs = 0;
  private sliceStart = performance.now();
  private sliceCpu = cpuMs();
  private calls = 0;
  /** The watchdog's view: a late turn spent in a slice is blamed on "metrics sampler". */
  private readonly unit: Work = work.begin("metrics sampler");

  /** Resolves at once while the slice has room; else after a turn of the event loop (a promise either way). */
  check(): Promise<void> | undefined {
    if (++this.calls % 8 !== 0) return undefined;
    if (performance.now() - this.sliceStart < SLICE_MS) return undefined;
    this.endSlice();
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        this.beginSlice();
        resolve();
      }),
    );
  }

  /** Ends the last slice, adding it to spentMs; the slicer's work is over. */
  finish(): number {
    this.endSlice();
    this.beginSlice();
    work.end(this.unit);
    return this.spentMs;
  }

  /** Before awaiting something off the event loop (a thread-pool read): what runs meanwhile is not the sampler's. */
  pause(): void {
    this.endSlice();
  }

  /** After it: a new slice starts. */
  resume(): void {
    this.beginSlice();
  }

  private beginSlice(): void {
    this.sliceStart = performance.now();
    this.sliceCpu = cpuMs();
  }

  private endSlice(): void {
    this.spentMs += Math.max(0, cpuMs() - this.sliceCpu);
    work.spent(this.unit, performance.now() - this.sliceStart);
  }
}

/**
 * Every pid /proc lists, read in slices (a directory read hands over a few hundred entries at a
 * time) when there may be many (`expected`: the last count): a machine with tens of thousands of
 * processes costs turns, never one long one. `max` bounds what is returned (and held); `total`
 * counts them all. Empty where there is no /proc.
 */
export async function listPids(
  slicer: Slicer,
  max: number,
  expected = Number.POSITIVE_INFINITY,
): Promise<{ pids: number[]; total: number }> {
  const pids: number[] = [];
  let total = 0;
  // A few thousand entries are one directory read (a fraction of a millisecond, half the cost of reading them one by one).
  if (expected < FEW_PIDS) {
    let names: string[];
    try {
      names = readdirSync("/proc");
    } catch {
      return { pids, total };
    }
    for (const name of names) {
      const first = name.charCodeAt(0);
      if (first < 48 || first > 57) continue;
      total++;
      if (pids.length < max) pids.push(Number(name));
    }
    return { pids, total };
  }
  let dir: ReturnType<typeof opendirSync>;
  try {
    dir = opendirSync("/proc", { bufferSize: 256 });
  } catch {
    return { pids, total };
  }
  try {
    for (;;) {
      const entry = dir.readSync();
      if (!entry) break;
      const name = entry.name;
      const first = name.charCodeAt(0);
      if (first < 48 || first > 57) continue; // not a pid
      total++;
      if (pids.length < max) pids.push(Number(name));
      const pause = slicer.check();
      if (pause) await pause;
    }
  } finally {
    dir.closeSync();
  }
  return { pids, total };
}

import { closeSync, openSync, readSync } from "node:fs";

/** Kernel clock ticks per second for /proc times; 100 on every Linux we run on (getconf CLK_TCK). */
export const CLOCK_TICKS = 100;

/** What /proc/<pid>/stat says of a process's use of the machine (proc(5) field numbers in the comments). */
export interface ProcUsage {
  /** (4) */
  ppid: number;
  /** (3) R, S, D, Z (zombie) … */
  state: string;
  /** (22) clock ticks after boot when it started: with the pid, its identity. */
  startTicks: string;
  /** (14) + (15) utime + stime: CPU it used itself, all its threads, in clock ticks. */
  ownTicks: number;
  /** (16) + (17) cutime + cstime: CPU of its children it has waited for, and theirs, in clock ticks. */
  childTicks: number;
  /** (24) resident pages. */
  rssPages: number;
}

/**
 * Parses the fields of a /proc/<pid>/stat line that usage needs; undefined when it is not one. The
 * command name (field 2) may hold spaces and parentheses, so fields are counted after the last ")".
 */
export function parseUsage(text: string): ProcUsage | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const rest = text.slice(close + 2).split(" "); // rest[0] is field 3
  if (rest.length < 22) return undefined;
  const n = (i: number): number => Number(rest[i]);
  const usage = {
    state: rest[0]!,
    ppid: n(1),
    ownTicks: n(11) + n(12),
    childTicks: n(13) + n(14),
    startTicks: rest[19]!,
    rssPages: Math.max(0, n(21)),
  };
  if (!Number.isFinite(usage.ownTicks + usage.childTicks + usage.rssPages + usage.ppid) || !/^\d+$/.test(usage.startTicks))
    return undefined;
  return usage;
}

/** One buffer for every stat read: a stat line is a few hundred bytes. */
const scratch = Buffer.allocUnsafe(4096);

/**
 * The usage of a live process, or undefined when it is gone. Plain open/read/close into one buffer:
 * readFileSync takes a slow path on procfs (size 0) and allocates; a sampler reads hundreds of these.
 */
export function readUsage(pid: number | "self"): ProcUsage | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, "r");
  } catch {
    return undefined;
  }
  try {
    const n = readSync(fd, scratch, 0, scratch.length, null);
    return parseUsage(scratch.toString("latin1", 0, n));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

let pageBytes: number | undefined;

/** Bytes per page, as the kernel counts RSS: learnt once from this process's own RSS (libuv reads the same field). */
export function pageSize(): number {
  if (pageBytes === undefined) {
    const own = readUsage("self");
    const rss = process.memoryUsage.rss();
    const ratio = own && own.rssPages > 0 ? rss / own.rssPages : 4096;
    // The two reads are moments apart: round to the power of two it must be (4 KiB, 16 KiB, 64 KiB).
    pageBytes = 2 ** Math.round(Math.log2(ratio));
  }
  return pageBytes;
}

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
 * Parses the fields of a /proc/<pid>/stat line that usage needs, straight from its bytes (no
 * string per field: a sampler parses hundreds of these a second); undefined when it is not one.
 * The command name (field 2) may hold spaces and parentheses, so fields are counted after the last ")".
 */
export function parseUsageBytes(buf: Buffer, length: number): ProcUsage | undefined {
  const close = buf.lastIndexOf(0x29, length - 1); // ")"
  if (close < 0) return undefined;
  // Fields 3, 4, 14–17, 22 and 24, numbered as in proc(5); 3 is a letter, the rest whole numbers.
  const wanted = [0, 0, 0, 0, 0, 0, 0, 0]; // ppid utime stime cutime cstime starttime rss
  let field = 3;
  let state = "";
  let value = 0;
  let digits = false;
  for (let i = close + 2; i <= length; i++) {
    const c = i < length ? buf[i]! : 0x20;
    if (c !== 0x20 && c !== 0x0a) {
      if (field === 3) state += String.fromCharCode(c);
      else if (c >= 0x30 && c <= 0x39) {
        value = value * 10 + (c - 0x30);
        digits = true;
      } else if (c !== 0x2d) return undefined; // a minus sign (tpgid is -1 without a terminal): no field read here is ever negative
      continue;
    }
    if (field !== 3 && !digits) return undefined;
    const slot = field === 4 ? 0 : field >= 14 && field <= 17 ? field - 13 : field === 22 ? 5 : field === 24 ? 6 : -1;
    if (slot >= 0) wanted[slot] = value;
    if (field === 24) break;
    field++;
    value = 0;
    digits = false;
    if (c === 0x0a) break;
  }
  if (field !== 24 || state === "") return undefined;
  return {
    state,
    ppid: wanted[0]!,
    ownTicks: wanted[1]! + wanted[2]!,
    childTicks: wanted[3]! + wanted[4]!,
    startTicks: String(wanted[5]),
    rssPages: wanted[6]!,
  };
}

/** parseUsageBytes of a line as text. */
export function parseUsage(text: string): ProcUsage | undefined {
  const buf = Buffer.from(text, "latin1");
  return parseUsageBytes(buf, buf.length);
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
    return readUsageAt(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The usage read again through a descriptor kept open on /proc/<pid>/stat (one pread instead of
 * open, read and close); undefined once that process is gone. The descriptor names that process,
 * not its pid: a pid reused by another process reads as gone.
 */
export function readUsageAt(fd: number): ProcUsage | undefined {
  try {
    const n = readSync(fd, scratch, 0, scratch.length, 0);
    return n > 0 ? parseUsageBytes(scratch, n) : undefined;
  } catch {
    return undefined;
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

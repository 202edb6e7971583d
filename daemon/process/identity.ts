import { readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second for /proc times; 100 on every Linux we run on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** The fields of /proc/<pid>/stat the daemon reads (proc(5) numbering in the comments). */
export interface ProcStat {
  /** (1) */
  pid: number;
  /** (2) the command name, without its parentheses; it may hold spaces and parentheses itself. */
  comm: string;
  /** (3) R, S, D, Z (zombie), X (dead) … */
  state: string;
  /** (5) the process group. */
  pgid: number;
  /** (22) clock ticks after boot when the process started, as written (it can exceed 2^53 in theory). */
  startTicks: string;
}

/**
 * Parses one /proc/<pid>/stat line; undefined when it is not one. The command name (field 2) may
 * hold spaces and parentheses, so the fields are counted after the last ")".
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const rest = text.slice(close + 2).split(" "); // rest[0] is field 3
  const startTicks = rest[19];
  if (rest.length < 20 || startTicks === undefined || !/^\d+$/.test(startTicks)) return undefined;
  return { pid: Number(text.slice(0, open)), comm: text.slice(open + 2, close), state: rest[0]!, pgid: Number(rest[2]), startTicks };
}

/** The stat of a live process; undefined when it is gone or /proc is absent. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Every pid /proc lists; undefined where there is no /proc. */
export function procPids(): number[] | undefined {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return undefined;
  }
}

/** The kernel start time of a process (clock ticks since boot); null where /proc is not available. */
export function processStartTicks(pid: number): string | null {
  return readProcStat(pid)?.startTicks ?? null;
}

/** When the machine booted, in ms since the epoch (/proc/stat btime); undefined where /proc is absent. */
function bootTimeMs(): number | undefined {
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    return m ? Number(m[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is still the process a job started at `startedAt` (ISO time): a pid reused by
 * another process would have started later. Costs nothing at spawn time — only the daemon that
 * restarts after a crash asks.
 */
export function isProcessStartedAt(pid: number, startedAt: string, toleranceMs = 2000): boolean {
  const boot = bootTimeMs();
  const stat = readProcStat(pid);
  if (boot === undefined || stat === undefined) return false;
  const started = boot + (Number(stat.startTicks) * 1000) / CLOCK_TICKS;
  return Math.abs(started - Date.parse(startedAt)) <= toleranceMs;
}

/** Whether `pid` is still the process whose start time (processStartTicks) was recorded: false for a reused pid. */
export function isSameProcess(pid: number, startTicks: string): boolean {
  const now = processStartTicks(pid);
  return now === null || now === startTicks;
}

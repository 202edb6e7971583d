import { readFileSync } from "node:fs";

/** Kernel clock ticks per second for /proc times; 100 on every Linux we run on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** When the machine booted, in ms since the epoch (/proc/stat btime); undefined where /proc is absent. */
function bootTimeMs(): number | undefined {
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    return m ? Number(m[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** When a live process started, in ms since the epoch (from /proc/<pid>/stat field 22). */
function processStartMs(pid: number, boot: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses; fields after the last ")" are plain.
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    return Number.isFinite(ticks) ? boot + (ticks * 1000) / CLOCK_TICKS : undefined;
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
  if (boot === undefined) return false;
  const started = processStartMs(pid, boot);
  return started !== undefined && Math.abs(started - Date.parse(startedAt)) <= toleranceMs;
}

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/** When a process started, in clock ticks since boot (/proc/<pid>/stat field 22): with the pid, it names one process for good. */
function parseStartTime(stat: string): string | undefined {
  // The command name (field 2) may hold spaces and parentheses; fields after the last ")" are plain.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return rest[19];
}

/** The start time of a live process, read off the hot path; undefined where /proc is absent. */
export async function processStartTime(pid: number): Promise<string | undefined> {
  try {
    return parseStartTime(await readFile(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Whether `pid` is still the very process that started at `startTime` (not a reused pid). */
export function isSameProcess(pid: number, startTime: string): boolean {
  try {
    return parseStartTime(readFileSync(`/proc/${pid}/stat`, "utf8")) === startTime;
  } catch {
    return false;
  }
}

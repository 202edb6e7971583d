import type { JobStatus } from "../../protocol/common.js";
import { displayValue } from "../display.js";
import { cliErrorText } from "../flag-names.js";

/**
 * JSON for machines (--json or not a TTY), a short line for people. `human` formats a copy of
 * `value` whose strings are escaped for display (displayValue), so a job's title, command or
 * error can never draw on the terminal; it must format that copy, never `value` itself.
 */
export function printResult<T>(value: T, json: boolean, human?: (shown: T) => string): void {
  if (json || !human) process.stdout.write(`${JSON.stringify(value, null, json ? 0 : 2)}\n`);
  else process.stdout.write(`${human(displayValue(value))}\n`);
}

export function jobLine(job: JobStatus): string {
  const code = job.exitCode !== undefined ? ` exit=${job.exitCode}` : job.signal ? ` signal=${job.signal}` : "";
  const progress = job.progress ? ` ${job.progress.phase} ${job.progress.done}/${job.progress.total ?? "?"} ${job.progress.unit}` : "";
  return `${job.id}  ${job.state.padEnd(9)} ${job.kind.padEnd(14)}${code}${progress}  ${job.title}`;
}

/** Exit code a CLI command mirrors from a finished job. */
export function exitCodeOf(job: JobStatus): number {
  if (job.exitCode !== undefined) return job.exitCode;
  if (job.state === "succeeded") return 0;
  if (job.state === "cancelled") return 130;
  if (job.state === "timed_out") return 124;
  return 1;
}

/** "download failed: conflict: … pass --overwrite …" — a job that did not succeed, in the CLI's words. */
export function endedText(what: string, job: JobStatus): string {
  return `${what} ${job.state}${job.error ? `: ${cliErrorText(job.error)}` : ""}`;
}

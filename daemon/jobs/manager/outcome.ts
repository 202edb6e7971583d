import type { JobState } from "../../../protocol/common.js";
import type { Job, JobRecord } from "../job.js";
import type { JobOutcome } from "./types.js";

/**
 * The state a job ends in and the fields its record gets, from its runner's outcome and why it was
 * stopped (if it was): a shutdown makes it `lost`, a failed output write `failed` with that error,
 * another stop its reason (`cancelled`, `timed_out`).
 */
export function endOf(job: Job, outcome: JobOutcome): { state: JobState; fields: Partial<JobRecord> } {
  const fields: Partial<JobRecord> = { endedAt: new Date().toISOString(), pid: undefined };
  if (outcome.exitCode !== undefined) fields.exitCode = outcome.exitCode;
  if (!outcome.ok && outcome.signal !== undefined) fields.signal = outcome.signal;
  if (outcome.ok && outcome.result !== undefined) fields.result = outcome.result;
  if (!outcome.ok && outcome.error) fields.error = outcome.error;
  let state: JobState;
  if (job.stopReason === "shutdown") {
    state = "lost";
    fields.error = { code: "unavailable", message: "the daemon shut down while this job was running; its output up to then is kept" };
  } else if (job.stopReason === "output_failed") {
    state = "failed";
    fields.error = job.outputError;
  } else state = job.stopReason ?? (outcome.ok ? "succeeded" : "failed");
  return { state, fields };
}

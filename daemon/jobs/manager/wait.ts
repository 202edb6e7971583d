import type { JobStatus } from "../../../protocol/common.js";
import type { Deadlines } from "../deadlines.js";
import type { Job } from "../job.js";

/**
 * Resolves when the job ends, when it waits for input (a session command blocked reading its stdin:
 * `awaitingInput` in its status), or at the timeout, whichever is first; never affects the job.
 */
export function waitForEnd(job: Job, timeoutMs: number, deadlines: Deadlines): Promise<{ job: JobStatus; timedOut: boolean }> {
  if (job.finished || (job.record as Readonly<Record<string, unknown>>).awaitingInput === true)
    return Promise.resolve({ job: job.status(), timedOut: false });
  return new Promise((resolve) => {
    const onEnd = (): void => {
      cancel();
      job.off("end", onEnd);
      job.off("awaiting", onEnd);
      resolve({ job: job.status(), timedOut: false });
    };
    const cancel = deadlines.add(timeoutMs, () => {
      job.off("end", onEnd);
      job.off("awaiting", onEnd);
      resolve({ job: job.status(), timedOut: true });
    });
    job.once("end", onEnd);
    job.once("awaiting", onEnd);
  });
}

import { escalate } from "../../process/index.js";
import type { Job, StopReason } from "../job.js";

/**
 * Ends a job early: `signal` to its process group, SIGKILL (and its abort signal) after the grace;
 * a job with no process is aborted at once, a queued one handed to `dequeue` (which ends it). A
 * finished job is left as it is; the first reason to stop a job is the one it keeps.
 */
export function stopJob(job: Job, reason: StopReason, signal: NodeJS.Signals, graceMs: number, dequeue: (job: Job) => void): void {
  if (job.finished) return;
  job.requestStop(reason);
  if (job.state === "queued") {
    dequeue(job);
    return;
  }
  const control = job.control;
  if (!control.kill) {
    job.abort.abort(reason);
    return;
  }
  const escalation = escalate((s) => control.kill!(s), graceMs, { first: signal, onKill: () => job.abort.abort(reason) });
  job.once("end", () => escalation.cancel());
}

import type { JobContext, JobOutcome } from "../jobs/manager.js";
import type { ActionContext } from "./context.js";
import { startJob, type JobReply } from "./job-start.js";

/** What a long workspace action (clone, snapshot, bundle) asks of the job table. */
export interface WorkspaceJobRequest {
  kind: string;
  title: string;
  /** The action's own parameters, minus `wait`: what idempotency keys compare. */
  params: unknown;
  key?: string;
  wait?: number;
  cwd?: string;
  run(jobCtx: JobContext): Promise<object>;
}

/**
 * Runs workspace work as a managed job whose result is the domain result; with `wait`, answers in
 * the same reply when the job ends in time (then job.result holds the outcome).
 */
export async function startWorkspaceJob(req: WorkspaceJobRequest, { services }: ActionContext): Promise<JobReply> {
  const run = async (jobCtx: JobContext): Promise<JobOutcome> => ({ ok: true, result: { ...(await req.run(jobCtx)) } });
  return startJob(services, { kind: req.kind, title: req.title, key: req.key, params: req.params, cwd: req.cwd, run }, { wait: req.wait });
}

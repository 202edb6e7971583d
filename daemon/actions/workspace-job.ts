import type { JobStatus } from "../../protocol/common.js";
import type { JobContext } from "../jobs/manager.js";
import type { ActionContext } from "./context.js";

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
export async function startWorkspaceJob(req: WorkspaceJobRequest, { services }: ActionContext): Promise<{ job: JobStatus }> {
  const job = services.jobs.start({
    kind: req.kind,
    title: req.title,
    key: req.key,
    params: req.params,
    cwd: req.cwd,
    run: async (jobCtx) => ({ ok: true, result: { ...(await req.run(jobCtx)) } }),
  });
  if (req.wait === undefined || req.wait === 0) return { job: job.status() };
  return { job: (await services.jobs.wait(job.id, req.wait)).job };
}

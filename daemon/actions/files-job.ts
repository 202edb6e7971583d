import type { JobContext } from "../jobs/manager.js";
import type { ActionContext } from "./context.js";
import { startJob, type JobReply } from "./job-start.js";

/** What files.download and files.extract hand to the job table. */
export interface FileJobRequest {
  kind: "files.download" | "files.extract";
  title: string;
  /** The action's parameters without `wait` (idempotency compares these). */
  params: unknown;
  key?: string;
  timeoutMs?: number;
  wait?: number;
  cwd?: string;
  /** The work; returns the job's result. Runners remove partial files before it settles. */
  work(jobCtx: JobContext): Promise<Record<string, unknown>>;
  /** One line for the job's output log when the work succeeds. */
  summary(result: Record<string, unknown>): string;
}

/**
 * Starts a non-process file job with the same status, progress, cancel, timeout and `wait`
 * behaviour as a shell job: cancel aborts the job's signal, and the runner cleans up before the
 * job is recorded as ended.
 */
export async function startFileJob(req: FileJobRequest, ctx: ActionContext): Promise<JobReply> {
  return startJob(
    ctx.services,
    {
      kind: req.kind,
      title: req.title,
      key: req.key,
      params: req.params,
      timeoutMs: req.timeoutMs,
      cwd: req.cwd,
      run: async (jobCtx) => {
        const result = await req.work(jobCtx);
        jobCtx.output("stdout", `${req.summary(result)}\n`);
        return { ok: true, result };
      },
    },
    { wait: req.wait },
  );
}

import type { InlineOutput, JobStatus } from "../../protocol/common.js";
import type { Job } from "../jobs/job.js";
import type { StartJobOptions } from "../jobs/manager.js";
import type { Services } from "./context.js";
import { inlineOutput } from "./inline-output.js";

/** How a job-starting action replies: the client's `wait`, and whether its output comes inline. */
export interface JobReplyOptions {
  /** Wait up to this many ms for the job to end before replying (0 or absent: reply at once). */
  wait?: number;
  /** Add the ended job's output (head + tail) to a reply that waited (process jobs). */
  inline?: boolean;
  /** Called with the job as soon as it exists, before any wait (e.g. to let identical requests join it). */
  started?(job: Job): void;
}

/** The reply of every action that starts a job. */
export interface JobReply {
  job: JobStatus;
  output?: InlineOutput;
}

/** Replies for a job: at once, or with `wait` once it ends in time (its output inline when asked). */
export async function replyForJob(services: Services, job: Job, { wait, inline }: JobReplyOptions): Promise<JobReply> {
  if (wait === undefined || wait === 0) return { job: job.status() };
  const { job: status } = await services.jobs.wait(job.id, wait);
  if (!inline || !job.finished || !job.log) return { job: status };
  return { job: status, output: inlineOutput(job.log) };
}

/** The one way an action starts a job and answers for it: start, optionally wait, status + inline output. */
export async function startJob(services: Services, options: StartJobOptions, reply: JobReplyOptions = {}): Promise<JobReply> {
  const job = services.jobs.start(options);
  reply.started?.(job);
  return replyForJob(services, job, reply);
}

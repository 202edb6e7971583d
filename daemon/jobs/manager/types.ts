import type { Logger } from "pino";
import type { JobUsage } from "../../../protocol/common.js";
import type { WireError } from "../../../protocol/errors.js";
import type { RunContext } from "../../runners/context.js";
import type { Job, JobControl } from "../job.js";

export interface JobContext extends RunContext {
  id: string;
  /** The job's own directory; scratch space is allowed under `dir/tmp`. */
  dir: string;
  /** Lets a process runner receive input, resize and signals. */
  setControl(control: JobControl): void;
  /** What its processes have used so far (the sampler's latest figure), if it has any. */
  usage(): JobUsage | undefined;
  /** Adds fields to the job's status while it runs (see Job.annotate); persisted with its next record. */
  annotate(fields: Record<string, unknown>): void;
}

/**
 * Where a process job's final usage comes from when it ends (the metrics sampler, which main.ts
 * wires in): asked once, in the job's end, before its record is written.
 */
export interface UsageMeter {
  finalUsage(job: Job): JobUsage | undefined;
}

export type JobOutcome =
  | { ok: true; exitCode?: number; result?: Record<string, unknown> }
  | { ok: false; exitCode?: number; signal?: string; error?: WireError };

export interface StartJobOptions {
  kind: string;
  title: string;
  key?: string;
  params: unknown;
  timeoutMs?: number;
  cwd?: string;
  run(ctx: JobContext): Promise<JobOutcome>;
}

export interface JobManagerOptions {
  dir: string;
  outputCapBytes: number;
  /** Output kept across all jobs; 0 or absent: defaultOutputBudget. */
  outputBudgetBytes?: number;
  retainJobs: number;
  maxRunningJobs?: number;
  log: Logger;
}

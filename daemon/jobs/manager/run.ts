import type { Logger } from "pino";
import { ActionError } from "../../../protocol/errors.js";
import type { ProgressUpdate } from "../../runners/context.js";
import { work } from "../../watchdog/work.js";
import type { Job, JobControl } from "../job.js";
import type { JobContext, JobOutcome, StartJobOptions } from "./types.js";

/** What a running job reports to the manager. */
export interface RunHooks {
  output(stream: "stdout" | "stderr" | "pty", data: Buffer | string): void;
  progress(update: ProgressUpdate): void;
  /** A control was attached (with a pid: persist it, so the next daemon can stop the group after a crash). */
  attached(control: JobControl): void;
  /** The job's own deadline passed. */
  timedOut(): void;
  /** The runner settled: what it returned, or its failure as an outcome. */
  settled(outcome: JobOutcome): void;
}

/**
 * Runs a job's runner with its context: its signal, its logger (made on first use), its output and
 * progress, and its deadline; a runner that throws fails the job with the error's code (`internal`
 * for an unexpected one, nothing when the job was aborted).
 */
export function runJob(job: Job, options: StartJobOptions, rootLog: Logger, hooks: RunHooks): void {
  const outputWork = { label: `job output ${job.id}` };
  let log: JobContext["log"] | undefined;
  let timer: NodeJS.Timeout | undefined;
  if (options.timeoutMs !== undefined) timer = setTimeout(() => hooks.timedOut(), options.timeoutMs);
  const ctx: JobContext = {
    id: job.id,
    dir: job.dir,
    signal: job.abort.signal,
    // Made on first use: most process jobs never log, and a child logger costs more than a spawn's bookkeeping.
    get log() {
      return (log ??= rootLog.child({ job: job.id, kind: job.record.kind }));
    },
    // Timed for the watchdog, so a long turn spent on a job's output (its log, its followers) names the job.
    output: (stream, data) => work.timed(outputWork, () => hooks.output(stream, data)),
    progress: (update) => hooks.progress(update),
    setControl: (control) => {
      job.attach(control);
      hooks.attached(control);
    },
    usage: () => job.usage,
    annotate: (fields) => job.annotate(fields),
  };
  let promise: Promise<JobOutcome>;
  try {
    promise = options.run(ctx);
  } catch (err) {
    promise = Promise.reject(err);
  }
  promise
    .catch((err: unknown): JobOutcome => {
      if (err instanceof ActionError) return { ok: false, error: err.toWire() };
      if (job.abort.signal.aborted) return { ok: false };
      ctx.log.error({ err }, "job failed unexpectedly");
      return { ok: false, error: { code: "internal", message: (err as Error)?.message ?? String(err) } };
    })
    .then((outcome) => {
      if (timer) clearTimeout(timer);
      hooks.settled(outcome);
    });
}

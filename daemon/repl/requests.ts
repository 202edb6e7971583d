import type { Logger } from "pino";
import { ActionError } from "../../protocol/errors.js";
import type { Job } from "../jobs/job.js";
import type { JobContext, JobManager, JobOutcome } from "../jobs/manager.js";
import type { ReplChild } from "./child.js";
import { afterPendingOutput } from "./drain.js";
import type { Generation } from "./host.js";
import { RESTART_AFTER_KILL_MS, RunningRequest, TERM_AFTER_INTERRUPT_MS } from "./request.js";
import type { ReplRequest, ReplState, RequestStopper } from "./types.js";

/** What the request runner needs of the repl that owns it. */
export interface RequestHost {
  readonly name: string;
  readonly jobs: JobManager;
  readonly log: Logger;
  readonly stopper: RequestStopper;
  readonly timing: { termGraceMs?: number; restartAfterKillMs?: number };
  state(): ReplState;
  setState(state: ReplState): void;
  /** The current generation and a promise of its readiness (a request waits through a restart). */
  generation(): { gen: Generation | undefined; ready: Promise<void>; number: number };
  becomeIdle(): void;
  restart(reason: string): Promise<void>;
  bytesRead(): number;
}

/**
 * The repl's requests, one at a time: admission (a second is `conflict` naming the running job,
 * the same key gets that job), running one as a job (its control: the child's input and the stop
 * steps), and ending it: by its end message, by the child's exit, or by a restart when it would
 * not stop.
 */
export class Requests<M> {
  /** The running request, from its job's start until its output is drained. */
  current: RunningRequest<M> | undefined;
  /** A request whose job waits in the manager's queue: it holds the repl as a running one does. */
  private queued: Job | undefined;

  constructor(private readonly host: RequestHost) {}

  get runningJob(): string | undefined {
    return this.current?.job.id ?? this.queued?.id;
  }

  admit(request: ReplRequest<M>): Job {
    const { jobs, name } = this.host;
    const running = this.runningJob;
    const options = {
      kind: request.kind,
      title: request.title,
      params: request.params,
      key: request.key,
      timeoutMs: request.timeoutMs,
      cwd: request.cwd,
      run: (job: JobContext) => this.run(request, job),
    };
    if (running !== undefined) {
      // A retry with the running request's key gets that job (or the key's conflict), never a second run.
      if (request.key !== undefined && jobs.get(running).record.key === request.key) return jobs.start(options);
      throw new ActionError(
        "conflict",
        `${name} is running job ${running}; it takes one request at a time: wait for that job (jobs.wait) or cancel it (jobs.cancel)`,
        { details: { job: running } },
      );
    }
    // A key reused after its job ended returns that job: only a job created here runs.
    let created: Job | undefined;
    const onCreated = (job: Job): void => void (created ??= job);
    jobs.on("job.created", onCreated);
    let job: Job;
    try {
      job = jobs.start(options);
    } finally {
      jobs.off("job.created", onCreated);
    }
    if (job === created && !job.finished && this.current?.job.id !== job.id) {
      this.queued = job;
      job.once("end", () => {
        if (this.queued === job) this.queued = undefined;
      });
    }
    return job;
  }

  /** A request that would not stop: it ends now, saying so, and a new generation replaces the child. */
  restartStuck(running: RunningRequest<M>, why: string): void {
    if (running.done || this.host.state() === "closed") return;
    this.host.setState("restarting");
    const next = this.host.generation().number + 1;
    running.end(
      running.request.restarted?.(next, running.job) ?? {
        ok: false,
        error: {
          code: "unavailable",
          message: `${this.host.name}: the request ${why}; the child was restarted (generation ${next}) and its state is lost`,
        },
      },
    );
    this.replace(`request ${running.job.id} ${why}`);
  }

  /** Starts the next generation in the background; a failure ends the repl (restart says why). */
  replace(reason: string): void {
    void this.host.restart(reason).catch((err: unknown) => this.host.log.warn({ err, name: this.host.name }, "restart failed"));
  }

  private async run(request: ReplRequest<M>, job: JobContext): Promise<JobOutcome> {
    const host = this.host;
    if (this.queued?.id === job.id) this.queued = undefined;
    const { ready } = host.generation();
    if (host.state() === "restarting" || host.state() === "starting") await ready.catch(() => {});
    const { gen } = host.generation();
    const child = gen?.child;
    if (host.state() !== "idle" || !gen || !child)
      return { ok: false, error: { code: "conflict", message: `${host.name} has ${host.state()}; the request did not run` } };
    // Cancelled (or timed out) before it reached the child: the manager's stop found no control to
    // signal and aborted the job instead; the request is never sent.
    if (job.signal.aborted) return { ok: false };
    host.setState("busy");
    const running = new RunningRequest(request, job, gen.number);
    this.current = running;
    job.setControl({
      input: request.input ?? ((data, eof, timeoutMs) => child.input(data, eof, timeoutMs)),
      kill: (signal) => this.stop(running, child, signal),
    });
    let outcome: JobOutcome;
    try {
      request.send(child, job);
      outcome = await running.ended;
      await afterPendingOutput(() => host.bytesRead());
      if (request.finish) outcome = await request.finish(outcome, job);
    } catch (err) {
      running.end({ ok: false });
      outcome = { ok: false, error: { code: "internal", message: `${host.name}: ${(err as Error).message}` } };
    } finally {
      if (this.current === running) this.current = undefined;
      if (host.state() === "busy") host.becomeIdle();
    }
    return outcome;
  }

  private stop(running: RunningRequest<M>, child: ReplChild, signal: NodeJS.Signals): void {
    const timing = {
      termGraceMs: this.host.timing.termGraceMs ?? TERM_AFTER_INTERRUPT_MS,
      restartAfterMs: this.host.timing.restartAfterKillMs ?? RESTART_AFTER_KILL_MS,
    };
    running.stop(signal, child, this.host.stopper, timing, () => this.restartStuck(running, "did not stop after SIGKILL"));
  }
}

import type { JobContext, JobOutcome } from "../jobs/manager.js";
import type { ReplChild } from "./child.js";
import type { ReplRequest, RequestStopper } from "./types.js";

/** How far stopping a request has gone: nothing yet, interrupted (SIGINT), or killed (SIGKILL). */
export type Stopping = "no" | "interrupted" | "killed";

/** The grace between the interrupt and SIGTERM, and between SIGKILL and a restart, unless the repl says otherwise. */
export const TERM_AFTER_INTERRUPT_MS = 1000;
export const RESTART_AFTER_KILL_MS = 1000;

/** One request while its job runs: its end (first outcome wins) and how far stopping it went. */
export class RunningRequest<M> {
  readonly ended: Promise<JobOutcome>;
  stopping: Stopping = "no";
  done = false;
  private resolve!: (outcome: JobOutcome) => void;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    readonly request: ReplRequest<M>,
    readonly job: JobContext,
    readonly generation: number,
  ) {
    this.ended = new Promise((resolve) => (this.resolve = resolve));
  }

  /** Ends the request with its outcome; later ends are ignored. */
  end(outcome: JobOutcome): void {
    if (this.done) return;
    this.done = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.resolve(outcome);
  }

  /**
   * The job manager's kill (cancel, timeout, shutdown) mapped onto the stopper's steps: any first
   * signal interrupts, SIGTERM follows after `termGraceMs`; the manager's SIGKILL (after its own
   * grace, or at once when a cancel asked for it) terminates, and `escalate` (a restart) follows
   * when the request has still not ended `restartAfterMs` later.
   */
  stop(
    signal: NodeJS.Signals,
    child: ReplChild,
    stopper: RequestStopper,
    timing: { termGraceMs: number; restartAfterMs: number },
    escalate: () => void,
  ): void {
    if (this.done || this.stopping === "killed") return;
    if (signal === "SIGKILL") {
      this.stopping = "killed";
      stopper.terminate(child, "SIGKILL");
      this.after(timing.restartAfterMs, escalate);
    } else if (this.stopping === "no") {
      this.stopping = "interrupted";
      stopper.interrupt(child);
      this.after(timing.termGraceMs, () => {
        if (this.stopping === "interrupted") stopper.terminate(child, "SIGTERM");
      });
    }
  }

  private after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      if (!this.done) fn();
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }
}

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { WireError } from "../../protocol/errors.js";
import type { Job } from "../jobs/job.js";
import type { JobContext, JobManager, JobOutcome } from "../jobs/manager.js";
import { reapMarked, terminateGroup } from "../process/index.js";
import type { ChildExit, ReplChild } from "./child.js";

/** The job each generation of a child runs in: its kind, title and parameters. */
export interface HostSpec {
  kind: string;
  title(generation: number): string;
  params: unknown;
  cwd: string;
  /** Fields for the host job's status, set before its first record with a pid is written. */
  fields?(): Record<string, unknown>;
}

/** Why the daemon ended a generation (none: it exited by itself). */
export type EndReason = { why: "closed"; message: string } | { why: "restarted"; message: string };

/**
 * One generation of a long-lived child, run as a job of its own (the host job): it is listed,
 * its log is the child's transcript (what it wrote between requests, and what the face copies
 * there), its record holds the pid the next daemon stops after a crash, and a daemon shutdown
 * ends it `lost`. The child exists once the manager runs the job.
 */
export class Generation {
  readonly job: Job;
  /** Resolves with the child once it was spawned (the host job may first wait in the manager's queue). */
  readonly spawned: Promise<ReplChild>;
  child: ReplChild | undefined;
  private ctx: JobContext | undefined;
  private endedBy: EndReason | undefined;

  constructor(
    jobs: JobManager,
    spec: HostSpec,
    readonly number: number,
    spawn: (scratch: string, hostJob: string) => ReplChild,
    /** jobs.cancel of the host job, or the daemon's shutdown: the face closes the child. */
    onKill: (signal: NodeJS.Signals) => void,
    /** Runs after the child exited, before the host job ends (its last output read). */
    afterExit: (exit: ChildExit) => Promise<void>,
  ) {
    let spawned!: (child: ReplChild) => void;
    this.spawned = new Promise((resolve) => (spawned = resolve));
    this.job = jobs.start({
      kind: spec.kind,
      title: spec.title(number),
      params: spec.params,
      cwd: spec.cwd,
      run: async (ctx) => {
        const scratch = join(ctx.dir, "tmp");
        mkdirSync(scratch, { recursive: true, mode: 0o700 });
        const child = spawn(scratch, ctx.id);
        this.child = child;
        this.ctx = ctx;
        if (spec.fields) ctx.annotate(spec.fields());
        ctx.setControl({ pid: child.pid, kill: onKill });
        spawned(child);
        const exit = await child.exited;
        // As for a process job: what the child left running goes with it, in its group or not.
        terminateGroup(child.pid);
        reapMarked(ctx.id);
        await afterExit(exit);
        return this.outcome(exit);
      },
    });
  }

  /** Bytes for the transcript (the host job's log); dropped before the job runs or after it ended. */
  output(stream: "stdout" | "stderr", data: Buffer | string): void {
    if (this.ctx && !this.job.finished) this.ctx.output(stream, data);
  }

  /** Fields for the host job's status (the face's session id, its cwd). */
  annotate(fields: Record<string, unknown>): void {
    this.ctx?.annotate(fields);
  }

  /** Notes why the daemon is ending this generation, before it signals the child; the first reason stays. */
  end(reason: EndReason): void {
    this.endedBy ??= reason;
  }

  private outcome(exit: ChildExit): JobOutcome {
    const ended = this.endedBy;
    if (ended?.why === "closed") return { ok: true, result: { ended: ended.message } };
    const error: WireError | undefined =
      ended?.why === "restarted"
        ? { code: "unavailable", message: ended.message }
        : exit.error !== undefined
          ? { code: "unavailable", message: exit.error }
          : undefined;
    if (exit.exitCode === 0 && !error) return { ok: true, exitCode: 0 };
    return { ok: false, exitCode: exit.exitCode, signal: exit.signal, ...(error ? { error } : {}) };
  }
}

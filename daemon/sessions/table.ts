import { statSync } from "node:fs";
import { homedir } from "node:os";
import type { Logger } from "pino";
import { ActionError } from "../../protocol/errors.js";
import { composeJobEnvironment } from "../environment/job-env.js";
import type { EnvironmentResolver } from "../environment/resolver.js";
import { newJobId } from "../jobs/ids.js";
import type { JobManager } from "../jobs/manager.js";
import { ChildBudget } from "../repl/index.js";
import { NONINTERACTIVE_DEFAULTS } from "./driver.js";
import { type Gone, goneFromJobs, LOST_ON_RESUME } from "./gone.js";
import { SESSION_SHELL_KIND, ShellSession } from "./session.js";

export interface SessionLimits {
  /** Sessions open at once, at most. */
  maxSessions: number;
  /** Resident memory of their shells together, at most. */
  maxMemoryBytes: number;
  idleTimeoutMs: number;
  inputWaitMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: 32,
  maxMemoryBytes: 512 * 1024 * 1024,
  idleTimeoutMs: 30 * 60_000,
  inputWaitMs: 3000,
};

/** Ended and lost sessions kept for session.status and resume, at most (the oldest go first). */
const GONE_KEPT = 100;

export interface OpenRequest {
  cwd?: string;
  env?: Record<string, string>;
  inputWaitMs?: number;
  idleTimeoutMs?: number;
  resume?: string;
}

export interface SessionServices {
  jobs: JobManager;
  resolver: EnvironmentResolver;
  baseEnv: Record<string, string>;
  log: Logger;
}

function checkCwd(cwd: string, path: string): void {
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new ActionError("invalid_request", `cwd ${cwd} is not an existing directory`, { path });
}

/**
 * The daemon's shell sessions: the open ones, and the ended or lost ones still known (for
 * session.status and `resume`). A session's id stays when it is resumed. After a restart the
 * sessions that were open are `lost`, found from their shells' jobs (see gone.ts).
 */
export class SessionTable {
  readonly budget: ChildBudget;
  private readonly open = new Map<string, ShellSession>();
  private readonly gone = new Map<string, Gone>();

  constructor(
    private readonly services: SessionServices,
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {
    this.budget = new ChildBudget({
      what: "shell sessions",
      maxChildren: limits.maxSessions,
      maxMemoryBytes: limits.maxMemoryBytes,
      advice: "close one (session.close) or wait for idle ones to time out",
    });
  }

  /** Loads the sessions an earlier daemon left open (now `lost`); after the job table was restored. */
  restore(): void {
    for (const gone of goneFromJobs(this.services.jobs)) this.keepGone(gone);
  }

  /** Opens a session (or resumes an ended or lost one in its last cwd); resolves once its shell is ready. */
  async openSession(request: OpenRequest): Promise<{ session: ShellSession; resumed?: { cwd: string; lost: string[] } }> {
    let id = `s${newJobId().slice(1)}`;
    let cwd = request.cwd ?? homedir();
    let resumed: { cwd: string; lost: string[] } | undefined;
    if (request.resume !== undefined) {
      if (this.open.has(request.resume))
        throw new ActionError("conflict", `session ${request.resume} is open; resume is for an ended or lost session`, { path: "/resume" });
      const gone = this.gone.get(request.resume);
      if (!gone)
        throw new ActionError("not_found", `no session ${request.resume}; session.list shows the sessions known`, { path: "/resume" });
      id = gone.id;
      cwd = request.cwd ?? gone.cwd;
      resumed = { cwd, lost: LOST_ON_RESUME };
    }
    checkCwd(cwd, request.cwd === undefined && request.resume !== undefined ? "/resume" : "/cwd");
    const { jobs, resolver, baseEnv, log } = this.services;
    const own = { ...NONINTERACTIVE_DEFAULTS, ...request.env };
    const session = new ShellSession(
      {
        id,
        cwd,
        env: (dir) => composeJobEnvironment(baseEnv, resolver.resolve(dir), own),
        inputWaitMs: request.inputWaitMs ?? this.limits.inputWaitMs,
        idleTimeoutMs: request.idleTimeoutMs ?? this.limits.idleTimeoutMs,
        createdAt: new Date().toISOString(),
      },
      { jobs, budget: this.budget, log },
    );
    const gone = (end: { reason: string; exitCode?: number }): void => {
      if (this.open.get(id) === session) this.open.delete(id);
      this.keepGone({ id, state: "exited", cwd: session.cwd, createdAt: session.settings.createdAt, ended: end });
    };
    await session.start();
    this.gone.delete(id);
    // Closed while it started (the daemon stopping): known as ended, never left among the open ones.
    if (session.repl.ended) gone(session.repl.ended);
    else {
      this.open.set(id, session);
      session.repl.once("ended", gone);
    }
    return { session, resumed };
  }

  /** An open, ended or lost session; `not_found` for any other id. */
  find(id: string): ShellSession | Gone {
    const found = this.open.get(id) ?? this.gone.get(id);
    if (!found) throw new ActionError("not_found", `no session ${id}; session.list shows the sessions known`, { path: "/session" });
    return found;
  }

  /** A session that takes commands; an ended or lost one is `conflict`, saying how to go on. */
  forRun(id: string): ShellSession {
    const found = this.find(id);
    if (found instanceof ShellSession && found.state !== "exited") return found;
    const state = found instanceof ShellSession ? "exited" : found.state;
    const why = found instanceof ShellSession ? found.repl.ended?.reason : found.ended.reason;
    throw new ActionError(
      "conflict",
      `session ${id} has ${state === "lost" ? "been lost" : "ended"} (${why}); open a new one, or session.open with "resume": "${id}" for a new shell in its last cwd`,
      { path: "/session", details: { state } },
    );
  }

  list(): Array<ShellSession | Gone> {
    return [...this.open.values(), ...this.gone.values()];
  }

  /** Closes a session: its shell and every process it started end; it is kept as `exited`. */
  async close(id: string): Promise<ShellSession | Gone> {
    const found = this.find(id);
    if (found instanceof ShellSession) await found.close("closed by session.close");
    return this.find(id);
  }

  /** The daemon stops: every shell ends (their jobs are stopped as lost by the job manager's shutdown). */
  async shutdown(): Promise<void> {
    await Promise.all([...this.open.values()].map((s) => s.close("the daemon stopped")));
  }

  private keepGone(gone: Gone): void {
    this.gone.delete(gone.id);
    this.gone.set(gone.id, gone);
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
  }
}

export { SESSION_SHELL_KIND };

import { accessSync, constants, statSync } from "node:fs";
import { homedir, totalmem } from "node:os";
import type { Logger } from "pino";
import type { CodeLanguage } from "../../protocol/actions/code.js";
import { ActionError } from "../../protocol/errors.js";
import { composeJobEnvironment } from "../environment/job-env.js";
import type { EnvironmentResolver } from "../environment/resolver.js";
import { newJobId } from "../jobs/ids.js";
import type { JobManager } from "../jobs/manager.js";
import type { JobStatus } from "../../protocol/common.js";
import { ChildBudget } from "../repl/index.js";
import { CODE_CONTEXT_KIND, CodeContext } from "./context.js";
import { driverEnvironment } from "./driver.js";
import { interpreterFor } from "./interpreter.js";

export interface CodeLimits {
  /** Contexts with a live interpreter at once, at most. */
  maxContexts: number;
  /** Resident memory of their interpreters together, at most (checked when one starts). */
  maxMemoryBytes: number;
  /** A context's interpreter stops after this long without a run, unless it was created with its own. */
  idleTimeoutMs: number;
  /** How long an interrupted run may take to end before its interpreter is killed and restarted. */
  interruptGraceMs: number;
}

export const DEFAULT_CODE_LIMITS: CodeLimits = {
  maxContexts: 64,
  maxMemoryBytes: Math.min(1024 * 1024 * 1024, Math.floor(totalmem() / 4)),
  idleTimeoutMs: 30 * 60_000,
  interruptGraceMs: 1000,
};

/** Contexts of an earlier daemon remembered, at most. */
const LOST_KEPT = 100;

export interface CodeServices {
  jobs: JobManager;
  resolver: EnvironmentResolver;
  baseEnv: Record<string, string>;
  log: Logger;
}

export interface CreateRequest {
  language: CodeLanguage;
  cwd?: string;
  env?: Record<string, string>;
  idleTimeoutMs?: number;
  interpreter?: string;
}

function checkDirectory(cwd: string): void {
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new ActionError("invalid_request", `cwd ${cwd} is not an existing directory`, { path: "/cwd" });
}

function checkExecutable(path: string): void {
  try {
    accessSync(path, constants.X_OK);
    if (statSync(path).isFile()) return;
  } catch {
    // refused below
  }
  throw new ActionError("invalid_request", `interpreter ${path} is not an executable file`, { path: "/interpreter" });
}

/**
 * The daemon's code contexts: each an interpreter per context, the default one of each language
 * made on first use, all under one budget (count and memory) with a refusal that says how to free
 * room. Contexts live as long as the daemon: after a restart, none is known.
 */
export class CodeContextTable {
  readonly budget: ChildBudget;
  private readonly contexts = new Map<string, CodeContext>();
  private readonly defaults = new Map<CodeLanguage, Promise<CodeContext>>();
  /** Contexts an earlier daemon had when it stopped (their state is gone), by id: for the errors that name them. */
  private readonly lost = new Map<string, { language: CodeLanguage; isDefault: boolean }>();

  constructor(
    private readonly services: CodeServices,
    readonly limits: CodeLimits = DEFAULT_CODE_LIMITS,
  ) {
    this.budget = new ChildBudget({
      what: "code contexts",
      maxChildren: limits.maxContexts,
      maxMemoryBytes: limits.maxMemoryBytes,
      advice:
        "remove one you no longer need (code.context.remove; code.context.list shows each one's memory), or wait for idle ones to stop",
    });
  }

  /**
   * Learns, from the job table just restored, the contexts an earlier daemon had when it stopped:
   * a run naming one hears that it was lost, and the first run of a new default context that the
   * earlier default's state is gone.
   */
  restore(): void {
    const hosts = this.services.jobs.list({ kind: CODE_CONTEXT_KIND, state: "lost", limit: 1000 }).jobs;
    for (const job of hosts as Array<JobStatus & { context?: string; language?: CodeLanguage; default?: boolean }>) {
      if (job.context === undefined || job.language === undefined || this.lost.has(job.context)) continue;
      this.lost.set(job.context, { language: job.language, isDefault: job.default === true });
      if (this.lost.size >= LOST_KEPT) break;
    }
  }

  /** Creates a context; resolves once its interpreter is ready. */
  async create(request: CreateRequest, isDefault = false): Promise<CodeContext> {
    const cwd = request.cwd ?? homedir();
    checkDirectory(cwd);
    if (request.interpreter !== undefined) checkExecutable(request.interpreter);
    const { jobs, resolver, baseEnv, log } = this.services;
    const id = `c${newJobId().slice(1)}`;
    const context = new CodeContext(
      {
        id,
        language: request.language,
        cwd,
        isDefault,
        idleTimeoutMs: request.idleTimeoutMs ?? this.limits.idleTimeoutMs,
        createdAt: new Date().toISOString(),
        // Resolved at every start: a workspace prepared since then brings its interpreter and packages.
        spawn: () => {
          const workspace = resolver.resolve(cwd);
          const env = driverEnvironment(composeJobEnvironment(baseEnv, workspace, request.env), request.env);
          return { interpreter: interpreterFor(request.language, workspace, request.interpreter).path, env };
        },
      },
      { jobs, budget: this.budget, log, interruptGraceMs: this.limits.interruptGraceMs },
    );
    await context.ensureStarted();
    this.contexts.set(id, context);
    return context;
  }

  /** The context a run goes to, started: the one named, or the language's default (created on first use). */
  async forRun(params: { context?: string; language?: CodeLanguage }): Promise<CodeContext> {
    let context: CodeContext;
    if (params.context !== undefined) {
      context = this.find(params.context);
      if (params.language !== undefined && params.language !== context.language)
        throw new ActionError("invalid_request", `context ${context.id} runs ${context.language}, not ${params.language}`, {
          path: "/language",
        });
    } else context = await this.defaultContext(params.language ?? "python");
    await context.ensureStarted();
    return context;
  }

  find(id: string): CodeContext {
    const context = this.contexts.get(id);
    if (context) return context;
    const why = this.lost.has(id)
      ? `code context ${id} was lost when the daemon stopped, and its state with it; create a new one (code.context.create)`
      : `no code context ${id} (contexts do not outlive the daemon); code.context.list shows them`;
    throw new ActionError("not_found", why, { path: "/context" });
  }

  list(): CodeContext[] {
    return [...this.contexts.values()];
  }

  async remove(id: string): Promise<void> {
    const context = this.find(id);
    this.contexts.delete(id);
    if (context.settings.isDefault) this.defaults.delete(context.language);
    await context.remove();
  }

  /** The budget as code.context.list shows it. */
  usage(): { open: number; maxContexts: number; memoryBytes: number; maxMemoryBytes: number } {
    return {
      open: this.budget.count,
      maxContexts: this.limits.maxContexts,
      memoryBytes: this.budget.memoryBytes(),
      maxMemoryBytes: this.limits.maxMemoryBytes,
    };
  }

  /** The daemon stops: every interpreter ends (their jobs were stopped as lost by the job manager's shutdown). */
  async shutdown(): Promise<void> {
    await Promise.all(this.list().map((c) => c.remove()));
  }

  private defaultContext(language: CodeLanguage): Promise<CodeContext> {
    let made = this.defaults.get(language);
    if (!made) {
      const earlier = [...this.lost.entries()].find(([, c]) => c.isDefault && c.language === language)?.[0];
      made = this.create({ language }, true).then((context) => {
        if (earlier)
          context.notice({ reason: `the daemon restarted: the default ${language} context before it (${earlier}) and its state are gone` });
        return context;
      });
      this.defaults.set(language, made);
      // A default that could not start is not kept: the next run tries again.
      made.catch(() => {
        if (this.defaults.get(language) === made) this.defaults.delete(language);
      });
    }
    return made;
  }
}

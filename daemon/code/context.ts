import type { Logger } from "pino";
import type { CodeLanguage } from "../../protocol/actions/code.js";
import { ActionError } from "../../protocol/errors.js";
import type { Job, StopReason } from "../jobs/job.js";
import type { JobManager } from "../jobs/manager.js";
import { type ChildBudget, type ChildSpec, ndjsonDecoder, Repl, type ReplEnd, type ReplState } from "../repl/index.js";
import { DRIVER_PROTOCOL, driverArgv } from "./driver.js";
import { type DoneMessage, type DriverMessage, type ReadyMessage, readyOf } from "./messages.js";
import { CodeRun, type RestartNote, RUN_BOUNDS, type RunHost } from "./run.js";

/** The job kind of a context's interpreter process (one job per generation; its log holds output written between runs). */
export const CODE_CONTEXT_KIND = "code-context";

/** While a run is being stopped, SIGINT is sent again this often until it ends or is killed (PROTOCOL.md: a SIGINT can be lost inside Node). */
const INTERRUPT_RESEND_MS = 250;

/** What a context is created with; `spawn` is asked again at every start, so a prepare in between applies. */
export interface ContextSettings {
  id: string;
  language: CodeLanguage;
  cwd: string;
  isDefault: boolean;
  idleTimeoutMs: number;
  createdAt: string;
  /** The interpreter and environment of a start now. */
  spawn(): { interpreter: string; env: Record<string, string> };
}

export interface ContextDeps {
  jobs: JobManager;
  budget: ChildBudget;
  log: Logger;
  /** How long an interrupted run may take to end before its interpreter is killed. */
  interruptGraceMs?: number;
}

function restartReason(end: ReplEnd): string {
  if (end.reason.startsWith("idle for "))
    return `the interpreter was stopped after ${end.reason.slice(9)} without a run, to free its memory`;
  return `the interpreter ended: ${end.reason}`;
}

/**
 * One code context: an interpreter (a driver of daemon/code/drivers over daemon/repl) whose state
 * persists from run to run, and which tells every run honestly whether that state is still there:
 * its generation goes up with each fresh interpreter, and the run that first meets one says
 * `contextRestarted` with what was lost. An idle timeout stops the interpreter to free its memory;
 * the next run starts a fresh one.
 */
export class CodeContext implements RunHost {
  removing = false;
  lastRunAt: string | undefined;
  /** Set while the context has no interpreter: why the last one ended. */
  stopped: { reason: string } | undefined;
  /** What the driver said when the current interpreter started. */
  ready: ReadyMessage | undefined;
  private repl: Repl<DriverMessage> | undefined;
  /** Generations of the interpreters before the current Repl (each Repl counts its own from 1). */
  private generationBase = 0;
  private starting: Promise<void> | undefined;
  private names: string[] = [];
  private namesTotal: number | undefined;
  private count = 0;
  private note: RestartNote | undefined;
  private resend: NodeJS.Timeout | undefined;

  constructor(
    readonly settings: ContextSettings,
    private readonly deps: ContextDeps,
  ) {}

  get id(): string {
    return this.settings.id;
  }

  get language(): CodeLanguage {
    return this.settings.language;
  }

  get generation(): number {
    return Math.max(1, this.generationBase + (this.repl?.generation ?? 0));
  }

  get nextExecutionCount(): number {
    return this.count + 1;
  }

  get executionCount(): number {
    return this.count;
  }

  get state(): "starting" | "idle" | "busy" | "restarting" | "stopped" {
    const state: ReplState | undefined = this.repl?.state;
    if (state === undefined || state === "exited" || state === "closed") return "stopped";
    if (state === "idle") return this.repl?.runningJob ? "busy" : "idle";
    return state;
  }

  /** The running run's job, the interpreter's pid and its host job, while there is one. */
  get live(): { job?: string; pid?: number; hostJob?: string } {
    const repl = this.repl;
    if (!repl || this.state === "stopped") return {};
    return { job: repl.runningJob, pid: repl.child?.pid, hostJob: repl.hostJob?.id };
  }

  /** The names after the last run, for status. */
  get knownNames(): { names: string[]; namesTotal?: number } {
    return { names: this.names, ...(this.namesTotal !== undefined ? { namesTotal: this.namesTotal } : {}) };
  }

  /** Starts an interpreter unless one runs; refused past the budget (`limit_exceeded`), `unavailable` if it cannot start. */
  ensureStarted(): Promise<void> {
    if (this.removing) return Promise.reject(new ActionError("not_found", `context ${this.id} was removed`, { path: "/context" }));
    const state = this.repl?.state;
    // A repl that is starting or restarting takes requests: they wait for its ready (Repl.runRequest).
    if (state !== undefined && state !== "exited" && state !== "closed") return this.starting ?? Promise.resolve();
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Starts a run as a job (`conflict` while another runs: see Repl.request). */
  run(code: string, options: { timeoutMs?: number; key?: string }): Job {
    const repl = this.repl;
    if (!repl) throw new ActionError("conflict", `context ${this.id} has no interpreter; run again`);
    const note = this.note;
    const job = repl.request(new CodeRun(this, code, { ...options, note }).request());
    if (note === this.note) this.note = undefined;
    this.lastRunAt = new Date().toISOString();
    return job;
  }

  /** A fresh interpreter in place of the current one; resolves with what was lost. */
  async restart(): Promise<RestartNote> {
    const running = this.live.job;
    if (running)
      throw new ActionError(
        "conflict",
        `context ${this.id} is running job ${running}; cancel it first (jobs.cancel interrupts it, and kills and restarts the interpreter if it does not stop)`,
        { details: { job: running } },
      );
    const lost = this.note ?? this.lostNow();
    this.note = undefined;
    const repl = this.repl;
    if (repl && (repl.state === "idle" || repl.state === "exited")) {
      await repl.restart("restarted by code.context.restart");
      this.replaced();
    } else await this.ensureStarted();
    this.note = undefined; // asked for: no run needs to be told
    return { ...lost, reason: "restarted by code.context.restart" };
  }

  /** Tells the next run that state was lost before it (the daemon restarted under an earlier context of this place). */
  notice(note: RestartNote): void {
    this.note ??= note;
  }

  /** Ends the interpreter and every process it started. */
  async remove(): Promise<void> {
    this.removing = true;
    this.stopInterrupting();
    await this.starting?.catch(() => undefined);
    await this.repl?.close("removed by code.context.remove");
  }

  memoryPid(): number | undefined {
    return this.state === "stopped" ? undefined : this.repl?.child?.pid;
  }

  // RunHost: what a run reads and tells.

  lostNow(): RestartNote {
    return { reason: "", lost: this.names, ...(this.namesTotal !== undefined ? { lostTotal: this.namesTotal } : {}) };
  }

  stopReason(job: string): StopReason | undefined {
    return this.deps.jobs.get(job).stopReason;
  }

  ran(done: DoneMessage): void {
    this.names = done.names;
    this.namesTotal = done.namesTotal;
    this.count = done.executionCount;
  }

  replaced(): void {
    this.names = [];
    this.namesTotal = undefined;
    this.count = 0;
  }

  stopInterrupting(): void {
    clearInterval(this.resend);
    this.resend = undefined;
  }

  private async start(): Promise<void> {
    const { settings, deps } = this;
    const repl: Repl<DriverMessage> = new Repl<DriverMessage>({
      jobs: deps.jobs,
      budget: deps.budget,
      log: deps.log,
      name: `context ${settings.id}`,
      idleTimeoutMs: settings.idleTimeoutMs,
      termGraceMs: deps.interruptGraceMs,
      host: {
        kind: CODE_CONTEXT_KIND,
        title: (n) => `${settings.language} context ${settings.id} (generation ${this.generationBase + n})`,
        params: { context: settings.id },
        cwd: settings.cwd,
        fields: () => ({ context: settings.id, language: settings.language, ...(settings.isDefault ? { default: true } : {}) }),
      },
      driver: {
        spawn: (): ChildSpec => {
          const { interpreter, env } = settings.spawn();
          this.ready = undefined;
          return { argv: driverArgv(settings.language, interpreter), cwd: settings.cwd, env, stdin: "pipe" };
        },
        // The driver keeps its lines under maxLineBytes; the margin is for the line's own JSON.
        decoder: ndjsonDecoder(RUN_BOUNDS.maxLineBytes + 64 * 1024),
        isReady: (message) => {
          const ready = readyOf(message);
          if (!ready || ready.protocol !== DRIVER_PROTOCOL) return false;
          this.ready = ready;
          return true;
        },
        stopper: {
          // The driver's pid only: SIGINT is its interrupt (KeyboardInterrupt, the REPL's break); its children are its own business.
          interrupt: (child) => {
            child.signal("SIGINT");
            this.stopInterrupting();
            this.resend = setInterval(() => child.signal("SIGINT"), INTERRUPT_RESEND_MS);
            this.resend.unref();
          },
          // Past the grace: the whole group dies, and the core starts the next generation.
          terminate: (child) => {
            this.stopInterrupting();
            child.signalGroup("SIGKILL");
          },
        },
      },
    });
    repl.on("ended", (end: ReplEnd) => this.ended(repl, end));
    this.repl = repl;
    try {
      await repl.start();
    } catch (err) {
      if (this.repl === repl) this.repl = undefined;
      throw err;
    }
    this.stopped = undefined;
  }

  /** The interpreter ended (idle timeout, its own exit, removal): the next run starts a fresh one and is told. */
  private ended(repl: Repl<DriverMessage>, end: ReplEnd): void {
    this.stopInterrupting();
    if (this.repl !== repl) return;
    this.generationBase += repl.generation;
    this.repl = undefined;
    this.ready = undefined;
    if (this.removing) return;
    this.stopped = { reason: end.reason };
    // An interpreter that ran something held state: the next run says it is gone (a pending note keeps its list).
    if (this.note || this.count > 0 || this.names.length > 0) this.note = { ...(this.note ?? this.lostNow()), reason: restartReason(end) };
    this.replaced();
  }
}

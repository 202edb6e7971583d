import { join } from "node:path";
import type { Logger } from "pino";
import type { Job } from "../jobs/job.js";
import type { JobContext, JobManager, JobOutcome } from "../jobs/manager.js";
import { signalTarget } from "../process/index.js";
import { type ChildBudget, type ChildExit, Repl, type ReplChild } from "../repl/index.js";
import { bashArgv, controlLine, ttyNoise } from "./driver.js";
import { InputWatch, waitsForInput } from "./input-watch.js";
import { OutputTail } from "./output-tail.js";
import { childrenOfShell, foregroundOf, signalEach } from "./processes.js";
import { type SessionRecord, sessionRecords } from "./records.js";
import { diedUnder, SessionStdin } from "./stdin.js";
import { Transcript } from "./transcript.js";

/** The job kinds: the shell of a session (its transcript), and each command. */
export const SESSION_SHELL_KIND = "shell-session";
export const SESSION_COMMAND_KIND = "session";

export type SessionState = "idle" | "running" | "awaiting_input" | "exited" | "lost";

/** What a session is opened with (its environment already composed). */
export interface SessionSettings {
  id: string;
  cwd: string;
  /** The environment of a new shell in `cwd`: the daemon's, the workspace's, the defaults, the session's `env`. */
  env(cwd: string): Record<string, string>;
  inputWaitMs: number;
  idleTimeoutMs: number;
  createdAt: string;
}

const TITLE_MAX = 200;

/** A command as a job title: as given, cut at 200 characters. */
function titleOf(command: string): string {
  return command.length > TITLE_MAX ? `${command.slice(0, TITLE_MAX - 1)}…` : command;
}

/**
 * One shell session: a bash driven by daemon/sessions/driver.bash over daemon/repl, where each
 * command is a job of kind `session` whose exit code is the command's own and whose status carries
 * the session and its cwd after the command. It watches a running command for a wait on its stdin.
 */
export class ShellSession {
  cwd: string;
  readonly repl: Repl<SessionRecord>;
  private stdin: SessionStdin | undefined;
  private seq = 0;
  /** The state a shell that died under a command saved: the next generation restores it. */
  private restoreFrom: string | undefined;
  private replaced = false;
  private before: ReadonlySet<number> = new Set();
  private watch: InputWatch | undefined;
  private readonly tail = new OutputTail();
  private readonly transcript: Transcript;

  constructor(
    readonly settings: SessionSettings,
    deps: { jobs: JobManager; budget: ChildBudget; log: Logger },
  ) {
    this.cwd = settings.cwd;
    const session = this;
    this.repl = new Repl<SessionRecord>({
      ...deps,
      name: `session ${settings.id}`,
      idleTimeoutMs: settings.idleTimeoutMs,
      host: {
        kind: SESSION_SHELL_KIND,
        title: (n) => `bash session ${settings.id}${n > 1 ? ` (generation ${n})` : ""}`,
        params: { session: settings.id },
        get cwd() {
          return session.cwd;
        },
        fields: () => ({ session: settings.id, openedAt: settings.createdAt }),
      },
      driver: {
        spawn: ({ scratch }) => {
          this.stdin?.close();
          this.stdin = new SessionStdin(join(scratch, "stdin"), `session ${settings.id}`, () => this.repl.child?.pid);
          const restore: Record<string, string> = this.restoreFrom ? { __HL_RESTORE: this.restoreFrom } : {};
          this.restoreFrom = undefined;
          return { argv: bashArgv(), cwd: this.cwd, env: { ...settings.env(this.cwd), ...restore, __HL_DIR: scratch }, stdin: "pipe" };
        },
        decoder: sessionRecords,
        isReady: (record) => record.type === "ready",
        stopper: {
          interrupt: (child) => {
            signalTarget(child.pid!, "SIGINT"); // the shell: a builtin loop, `wait`, the line itself
            signalEach(this.foreground(child), "SIGINT");
          },
          terminate: (child, signal) => signalEach(this.foreground(child), signal),
        },
      },
    });
    this.transcript = new Transcript((stream, data) => this.repl.transcript(stream, data));
    this.repl.on("ended", () => {
      this.watch?.stop();
      this.stdin?.close();
    });
  }

  get id(): string {
    return this.settings.id;
  }

  get state(): SessionState {
    switch (this.repl.state) {
      case "exited":
      case "closed":
        return "exited";
      case "idle":
        return this.repl.runningJob ? "running" : "idle";
      default:
        return this.watch?.awaiting ? "awaiting_input" : "running";
    }
  }

  start(): Promise<void> {
    return this.repl.start();
  }

  /** Starts a command as a job; `conflict` while another runs (see Repl.request). */
  run(command: string, options: { timeoutMs?: number; key?: string } = {}): Job {
    return this.repl.request({
      kind: SESSION_COMMAND_KIND,
      title: titleOf(command),
      params: { session: this.id, command, timeoutMs: options.timeoutMs },
      key: options.key,
      timeoutMs: options.timeoutMs,
      cwd: this.cwd,
      send: (child, job) => this.send(child, job, command),
      message: (record) => (record.type === "done" && record.seq === this.seq ? this.ended(record.status, record.cwd) : undefined),
      input: (data, eof, timeoutMs) => {
        this.watch?.activity();
        return this.stdin ? this.stdin.input(data, eof, timeoutMs) : Promise.resolve(-1);
      },
      filter: (stream, data) => (stream === "stderr" && data.includes("tcsetattr") ? this.withoutTtyNoise(data) : data),
      output: (stream, data) => {
        this.tail.add(data);
        this.watch?.activity();
        this.transcript.output(stream, data);
      },
      exited: (exit) => this.exitedDuring(exit),
      restarted: (generation) => ({
        ok: false,
        error: {
          code: "unavailable",
          message: `the command did not stop after SIGKILL of its processes, so the shell was restarted (generation ${generation}) in ${this.cwd}: the variables, functions, aliases, options and background processes of the session before it are gone`,
          details: { sessionRestarted: true, generation },
        },
      }),
      finish: (outcome, job) => this.finish(outcome, job),
    });
  }

  close(reason: string): Promise<void> {
    return this.repl.close(reason);
  }

  private send(child: ReplChild, job: JobContext, command: string): void {
    const seq = ++this.seq;
    job.annotate({ session: this.id });
    this.stdin!.open();
    this.before = new Set(childrenOfShell(child.pid!));
    this.tail.reset();
    this.transcript.command(command);
    const fifo = this.stdin!.path;
    this.watch = new InputWatch(
      () => waitsForInput(child.pid!, fifo, this.tail.endsMidLine),
      this.settings.inputWaitMs,
      (awaiting) => this.awaiting(job, awaiting),
    );
    const text = Buffer.from(command);
    child.requests.write(text);
    child.stdin!.write(controlLine(seq, text, command));
  }

  private ended(status: number, cwd: string): JobOutcome {
    if (cwd) this.cwd = cwd;
    return status === 0 ? { ok: true, exitCode: 0 } : { ok: false, exitCode: status };
  }

  /**
   * `exit 3` ends the session with the command's code. A shell that said it died under a command
   * (set -e and an expansion error) is replaced at once, in its cwd, with its saved state.
   */
  private exitedDuring(exit: ChildExit): JobOutcome | { outcome: JobOutcome; restart: string } {
    const died = this.stdin ? diedUnder(this.stdin.path) : undefined;
    if (died && exit.exitCode !== undefined) {
      this.restoreFrom = died.state;
      const outcome = this.ended(exit.exitCode, died.cwd);
      this.replaced = true;
      return { outcome, restart: `bash exited under the command (status ${exit.exitCode})` };
    }
    if (exit.exitCode !== undefined) return this.ended(exit.exitCode, "");
    return {
      ok: false,
      signal: exit.signal,
      error: { code: "unavailable", message: `the session's shell ended (${exit.error ?? exit.signal})` },
    };
  }

  private finish(outcome: JobOutcome, job: JobContext): JobOutcome {
    this.watch?.stop();
    this.watch = undefined;
    job.annotate({ cwd: this.cwd, awaitingInput: undefined, ...(this.replaced ? { shellReplaced: true } : {}) });
    this.replaced = false;
    this.stdin?.commandEnded();
    this.transcript.ended(outcome.exitCode, this.tail.endsMidLine);
    return outcome;
  }

  private awaiting(job: JobContext, awaiting: boolean): void {
    const lastLine = awaiting ? this.tail.lastLine() : undefined;
    job.annotate({ awaitingInput: awaiting ? true : undefined, lastLine });
    job.progress({ phase: awaiting ? "awaiting input" : "running", message: lastLine ?? "" });
  }

  /** The running command's foreground processes (see foregroundOf). */
  private foreground(child: ReplChild): number[] {
    return child.pid !== undefined && this.stdin ? foregroundOf(child.pid, this.stdin.path, this.before) : [];
  }

  private withoutTtyNoise(data: Buffer): Buffer {
    const pid = this.repl.child?.pid;
    if (pid === undefined) return data;
    const text = data.toString("latin1");
    const cleaned = text.replace(new RegExp(ttyNoise(pid).source, "gm"), "");
    return cleaned.length === text.length ? data : Buffer.from(cleaned, "latin1");
  }
}

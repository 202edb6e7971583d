import { statSync } from "node:fs";
import { homedir } from "node:os";
import type { JobUsage } from "../../protocol/common.js";
import { ActionError, type ErrorCode, type WireError } from "../../protocol/errors.js";
import { composeJobEnvironment } from "../environment/job-env.js";
import type { WorkspaceEnvironment } from "../environment/resolver.js";
import { terminalEnvironment } from "../environment/terminal-env.js";
import type { JobContext, JobOutcome } from "../jobs/manager.js";
import { startProcess, type ProcessExit } from "../runners/process.js";
import { checkExecSize } from "../util/exec-limits.js";
import { shellCommandLine } from "../util/shell-quote.js";
import { JOB_MARKER, oomKillBaseline, oomKillText } from "../process/index.js";
import { untilTurnHasRoom } from "../util/turn-budget.js";
import type { ActionContext } from "./context.js";
import { startJob, type JobReply } from "./job-start.js";

/** An OOM kill's error, with the memory the job's processes were last seen to hold at their peak (the sampler reads them every 0.5 s). */
function oomError(text: string, usage: JobUsage | undefined): WireError {
  if (!usage) return { code: "limit_exceeded", message: text };
  const mib = (usage.peakRssBytes / 1048576).toFixed(1);
  return {
    code: "limit_exceeded",
    message: `${text}; its processes peaked at ${mib} MiB resident together (as sampled every 0.5 s; the last moments before the kill may have been higher)`,
    details: { peakRssBytes: usage.peakRssBytes },
  };
}

/** Everything a process job needs, whichever action (shell, files.run) asked for it. */
export interface ProcessJobRequest {
  kind: string;
  title: string;
  argv: string[];
  /** What idempotency compares: the action's own parameters. */
  params: unknown;
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string | boolean;
  pty?: { cols: number; rows: number };
  wait?: number;
  key?: string;
  /** The request field an argv entry came from (JSON Pointer), for errors that name it. */
  argPath?: (index: number) => string | undefined;
  /** Work after the process ended, inside the job (tasks.run's commit); its outcome is the job's. */
  after?(outcome: JobOutcome, jobCtx: JobContext): Promise<JobOutcome>;
}

const TITLE_MAX = 200;

/** A `command` field (a string for `bash -c`, or an argv) as argv, its text, a job title and its pointers. */
export function commandOf(command: string | string[], titlePrefix = "") {
  const text = typeof command === "string" ? command : shellCommandLine(command);
  const title = `${titlePrefix}${text}`;
  return {
    argv: typeof command === "string" ? ["bash", "-c", command] : command,
    text,
    title: title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX - 1)}…` : title,
    argPath: (i: number) => (typeof command === "string" ? (i === 2 ? "/command" : undefined) : `/command/${i}`),
  };
}

function checkCwd(cwd: string): void {
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new ActionError("invalid_request", `cwd ${cwd} is not an existing directory`, { path: "/cwd" });
}

/** The wire code of a process that could not be started, by the errno of its spawn. */
function spawnErrorCode(errno: string | undefined): ErrorCode {
  switch (errno) {
    case "E2BIG":
      return "limit_exceeded";
    case "EACCES":
    case "ENOEXEC":
    case "ENOTDIR":
      return "invalid_request";
    case "EAGAIN":
    case "EMFILE":
    case "ENFILE":
    case "ENOMEM":
      return "unavailable";
    default:
      return "not_found";
  }
}

function outcomeOf(exit: ProcessExit): JobOutcome {
  if (exit.spawnError !== undefined) {
    const code = spawnErrorCode(exit.spawnErrno);
    // As a shell reports it: 127 for a command that is not there, 126 for one that cannot run.
    return { ok: false, exitCode: code === "not_found" ? 127 : 126, error: { code, message: exit.spawnError } };
  }
  if (exit.signal !== undefined) return { ok: false, signal: exit.signal };
  if (exit.exitCode === 0) return { ok: true, exitCode: 0 };
  return { ok: false, exitCode: exit.exitCode ?? 1 };
}

function sameEnvironment(a: WorkspaceEnvironment | null, b: WorkspaceEnvironment | null): boolean {
  return a === b || (a !== null && b !== null && a.set === b.set && a.prepend === b.prepend);
}

let terminalRunner: Promise<typeof import("../runners/pty.js")> | undefined;

/**
 * node-pty loads with the first terminal (most daemons never open one), and before that job
 * starts: a job that is `running` in the start reply must take input and resize at once.
 */
function loadTerminalRunner(): Promise<typeof import("../runners/pty.js")> {
  terminalRunner ??= import("../runners/pty.js").catch((err: unknown) => {
    terminalRunner = undefined;
    throw new ActionError(
      "unavailable",
      `terminals are unavailable: node-pty did not load (${(err as Error).message}); run the command without "pty"`,
      { path: "/pty" },
    );
  });
  return terminalRunner;
}

/**
 * Starts a process job (pipes or a terminal) with the workspace's prepared environment, and with
 * `wait` answers in the same reply when the job ends in time.
 */
export async function startProcessJob(req: ProcessJobRequest, ctx: Pick<ActionContext, "services">): Promise<JobReply> {
  const { services } = ctx;
  // A burst of starts is spread over turns, so no client waits for a hundred spawns in one.
  const turn = untilTurnHasRoom();
  if (turn) await turn;
  const cwd = req.cwd ?? homedir();
  checkCwd(cwd);
  const terminal = req.pty ? await loadTerminalRunner() : undefined;
  const requestedWorkspace = services.env.resolver.resolve(cwd);
  const requestedEnv = composeJobEnvironment(services.baseEnv, requestedWorkspace, req.env);
  // What execve would refuse (E2BIG) is refused in this reply, naming the field, not as a failed job.
  checkExecSize(req.argv, requestedEnv, req.env, req.argPath);
  return startJob(
    services,
    {
      kind: req.kind,
      title: req.title,
      key: req.key,
      params: req.params,
      timeoutMs: req.timeoutMs,
      cwd,
      run: async (jobCtx) => {
        // Resolved again at spawn time so a prepare that finishes while the job waits in the queue applies.
        const workspace = services.env.resolver.resolve(cwd);
        const composed = sameEnvironment(workspace, requestedWorkspace)
          ? requestedEnv
          : composeJobEnvironment(services.baseEnv, workspace, req.env);
        // The marker goes last, over any value the job gave it: it is how the job's strays are found.
        const env = { ...composed, [JOB_MARKER]: jobCtx.id };
        const spec = { argv: req.argv, cwd, env, stdin: req.stdin, jobId: jobCtx.id };
        const oomBefore = oomKillBaseline();
        // Synchronous from here to setControl: the reply that says `running` already accepts input and resize.
        const started =
          terminal && req.pty
            ? terminal.startPty({ ...spec, env: terminalEnvironment(env, req.env), ...req.pty }, jobCtx)
            : startProcess(spec, jobCtx);
        jobCtx.setControl(started.control);
        const exit = await started.done;
        const outcome = outcomeOf(exit);
        // A SIGKILL nobody here sent: the kernel's OOM killer, if its count rose while the job ran.
        if (exit.signal === "SIGKILL" && !jobCtx.signal.aborted && !outcome.ok) {
          const oom = await oomKillText(oomBefore);
          if (oom) outcome.error = oomError(oom, jobCtx.usage());
        }
        return req.after ? req.after(outcome, jobCtx) : outcome;
      },
    },
    { wait: req.wait, inline: true },
  );
}

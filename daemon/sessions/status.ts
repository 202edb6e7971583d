import type { Static } from "@sinclair/typebox";
import type { SessionStatus } from "../../protocol/actions/session.js";
import { jobProcesses } from "../process/index.js";
import type { Gone } from "./gone.js";
import { ShellSession } from "./session.js";

export type SessionStatusWire = Static<typeof SessionStatus>;

/** A session as the protocol shows it (session.open, session.status, session.list). */
export function statusOf(found: ShellSession | Gone): SessionStatusWire {
  if (!(found instanceof ShellSession)) {
    return { id: found.id, state: found.state, cwd: found.cwd, createdAt: found.createdAt, ended: found.ended };
  }
  const { repl, settings } = found;
  const status: SessionStatusWire = {
    id: found.id,
    state: found.state,
    cwd: found.cwd,
    createdAt: settings.createdAt,
    generation: repl.generation,
    inputWaitMs: settings.inputWaitMs,
    idleTimeoutMs: settings.idleTimeoutMs,
  };
  const job = repl.runningJob;
  if (job) status.job = job;
  if (repl.hostJob) status.shellJob = repl.hostJob.id;
  if (repl.child?.pid !== undefined && status.state !== "exited") status.pid = repl.child.pid;
  if (repl.ended)
    status.ended = { reason: repl.ended.reason, ...(repl.ended.exitCode !== undefined ? { exitCode: repl.ended.exitCode } : {}) };
  return status;
}

/** With its processes: every live process carrying the shell job's marker but the shell (one scan of /proc, in slices). */
export async function statusWithProcesses(found: ShellSession | Gone): Promise<SessionStatusWire> {
  const status = statusOf(found);
  if (!(found instanceof ShellSession) || !found.repl.hostJob || status.state === "exited")
    return { ...status, processes: { count: 0, list: [] } };
  const all = await jobProcesses(found.repl.hostJob.id);
  const list = all.list.filter((p) => p.pid !== status.pid);
  return { ...status, processes: { count: all.count - (all.list.length - list.length), list } };
}

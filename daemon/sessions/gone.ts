import type { JobStatus } from "../../protocol/common.js";
import type { JobManager } from "../jobs/manager.js";
import { SESSION_COMMAND_KIND, SESSION_SHELL_KIND } from "./session.js";

/** A session that no longer has a shell: it ended (`exit`, close, idle), or the daemon stopped under it. */
export interface Gone {
  id: string;
  state: "exited" | "lost";
  cwd: string;
  createdAt: string;
  ended: { reason: string; exitCode?: number };
}

/** What a resumed session does not get back: said in the reply, never dropped silently. */
export const LOST_ON_RESUME: string[] = [
  "shell variables, functions, aliases, options and traps its commands set",
  "an activated venv or dev shell (activate it again)",
  "background processes (they ended with the earlier shell)",
  "the env given when it was opened (pass it again)",
];

type SessionJob = JobStatus & { session?: string; openedAt?: string };

/** The newest record per session id of the jobs of one kind. */
function newestBySession(jobs: JobManager, kind: string): Map<string, SessionJob> {
  const newest = new Map<string, SessionJob>();
  for (const job of jobs.list({ kind, limit: 100_000 }).jobs as SessionJob[]) {
    if (job.session !== undefined && !newest.has(job.session)) newest.set(job.session, job);
  }
  return newest;
}

/**
 * The sessions of an earlier daemon, from the records of their jobs: a shell job that was running
 * when that daemon stopped is `lost`, with the cwd after its last command (that command's job
 * records it) or else its shell's.
 */
export function goneFromJobs(jobs: JobManager): Gone[] {
  const shells = newestBySession(jobs, SESSION_SHELL_KIND);
  const commands = newestBySession(jobs, SESSION_COMMAND_KIND);
  const gone: Gone[] = [];
  for (const [id, shell] of shells) {
    if (shell.state === "running" || shell.state === "queued") continue; // this daemon's own
    const lost = shell.state === "lost";
    const ended = (shell.result?.ended as string | undefined) ?? (shell.exitCode !== undefined ? `exit ${shell.exitCode}` : shell.state);
    gone.push({
      id,
      state: lost ? "lost" : "exited",
      cwd: commands.get(id)?.cwd ?? shell.cwd ?? "/",
      createdAt: shell.openedAt ?? shell.createdAt,
      ended: lost ? { reason: "the daemon stopped while it was open" } : { reason: ended, exitCode: shell.exitCode },
    });
  }
  return gone.reverse(); // oldest first, as the table keeps them
}

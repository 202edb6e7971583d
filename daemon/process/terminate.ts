import { procPids, readProcStat } from "./identity.js";
import { signalGroup } from "./signal.js";

/** Between SIGTERM and SIGKILL unless a caller says otherwise: time to clean up, not to linger. */
export const DEFAULT_GRACE_MS = 2000;
/** How often a wait for a process group to be gone looks again. */
const POLL_MS = 10;

/** A SIGKILL still to come; cancel() when the target ended by itself. */
export interface Escalation {
  cancel(): void;
}

const NOTHING_TO_COME: Escalation = { cancel() {} };

/**
 * The daemon's one escalation: `first` (SIGTERM: let it clean up) now, SIGKILL after `graceMs`
 * unless cancelled. `send` reaches the target (a group, a job's control, a set of pids) and answers
 * false when the target is already gone (then no SIGKILL follows); `onKill` runs right after the
 * SIGKILL. The timer never keeps the daemon alive.
 */
export function escalate(
  send: (signal: NodeJS.Signals) => boolean | void,
  graceMs: number,
  options: { first?: NodeJS.Signals; onKill?: () => void } = {},
): Escalation {
  if (send(options.first ?? "SIGTERM") === false) return NOTHING_TO_COME;
  const timer = setTimeout(() => {
    send("SIGKILL");
    options.onKill?.();
  }, graceMs);
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
}

/**
 * Escalates on a whole process group; nothing (and no timer) when the group is already gone. Also
 * what follows a job's exit: the rest of its group (background children) is asked to stop, then
 * killed, so no job leaves processes behind.
 */
export function terminateGroup(pid: number | undefined, graceMs = DEFAULT_GRACE_MS): Escalation {
  return escalate((signal) => signalGroup(pid, signal), graceMs);
}

/** Whether a process group still has a member that is not a zombie (zombies await a reaper, not us). */
export function groupHasLiveMembers(pgid: number): boolean {
  const pids = procPids();
  // No /proc: zombies count as members, and the caller's deadline bounds the wait.
  if (!pids) return signalGroup(pgid, 0);
  for (const pid of pids) {
    const stat = readProcStat(pid); // undefined: it exited while we looked
    if (stat && stat.pgid === pgid && stat.state !== "Z" && stat.state !== "X") return true;
  }
  return false;
}

/** Resolves true once nothing of the group is alive, false if something still is after `timeoutMs`. */
export async function waitGroupGone(pgid: number | undefined, timeoutMs: number): Promise<boolean> {
  if (pgid === undefined || pgid <= 0) return true;
  const deadline = Date.now() + timeoutMs;
  while (groupHasLiveMembers(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

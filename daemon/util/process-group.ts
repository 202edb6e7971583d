/** Sends a signal to a process (or, negative, a process group); false when it no longer exists. */
export function signalTarget(target: number, signal: NodeJS.Signals | 0): boolean {
  // A process or group that is already gone is the common case after a job exits; its ESRCH error
  // would capture a stack trace (~35 µs) that nobody reads.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined || pid <= 0) return false;
  return signalTarget(-pid, signal);
}

/**
 * After a job's main process exits, the rest of its group (background children) is asked to stop,
 * then killed after `graceMs`, so no job leaves processes behind.
 */
export function reapGroup(pid: number | undefined, graceMs = 2000): void {
  if (!signalGroup(pid, "SIGTERM")) return;
  const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
  timer.unref();
}

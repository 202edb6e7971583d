/** Sends a signal to a process (or, negative, a process group); false when it no longer exists. */
export function signalTarget(target: number, signal: NodeJS.Signals | 0): boolean {
  // A process or group that is already gone is the common case after a job exits; its ESRCH error
  // would capture a stack trace (~35 µs) that nobody reads.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(target, signal);
    return true;
  } catch (error) {
    // EPERM: it exists but runs under another user; it is there, only not ours to signal.
    return signal === 0 && (error as NodeJS.ErrnoException).code === "EPERM";
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined || pid <= 0) return false;
  return signalTarget(-pid, signal);
}

/** Whether a pid names a running process (also one of another user). */
export function pidAlive(pid: number): boolean {
  return signalTarget(pid, 0);
}

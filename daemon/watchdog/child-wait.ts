import { mainThreadTimes, processRunQueueMs } from "./sched-clock.js";

/** A spawn blocked for less than this is not looked at further (the child's own exec takes about this long). */
const MIN_BLOCKED_MS = 1;

let creditedMs = 0;

/**
 * Starts a child process (`spawn`, `execFile`, execa: anything that forks synchronously and returns
 * it) and credits the watchdog with the time the main thread was blocked waiting for the child to
 * get a CPU.
 *
 * Why: Node's spawn returns only once the child has exec'd (libuv forks, then blocks reading a pipe
 * that the exec closes). Through that wait the main thread is asleep, not runnable, so its own
 * schedstat counts the wait as the daemon's time; on a loaded machine nearly all of it is the new
 * child waiting in a run queue before it can exec. That wait is the child's run_delay, which its
 * schedstat still shows when spawn returns (nothing has reaped it yet, even if it already exited).
 * The credit is the smaller of that and the time the spawn call was blocked (its wall time less the
 * main thread's own CPU and run-queue time across the call), so a child's wait after its exec, while
 * the daemon itself waited for a CPU, is never counted twice. Two reads of a held descriptor per
 * spawn, and an open of the child's schedstat only for a spawn that blocked.
 */
export function startChild<T extends { pid?: number | undefined }>(spawnIt: () => T): T {
  const startedAt = performance.now();
  const before = mainThreadTimes();
  const child = spawnIt();
  const wallMs = performance.now() - startedAt;
  if (!before || wallMs < MIN_BLOCKED_MS || child.pid === undefined) return child;
  const after = mainThreadTimes();
  if (!after) return child;
  const blockedMs = wallMs - (after.cpuMs - before.cpuMs) - (after.waitedMs - before.waitedMs);
  if (blockedMs < MIN_BLOCKED_MS) return child;
  const childWaitedMs = processRunQueueMs(child.pid);
  if (childWaitedMs) creditedMs += Math.min(blockedMs, childWaitedMs);
  return child;
}

/** The time (ms, since the daemon started) its main thread spent blocked in spawns while their children waited for a CPU. */
export function childrenRunQueueMs(): number {
  return creditedMs;
}

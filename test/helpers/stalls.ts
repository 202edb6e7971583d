/** An "event loop stalled" record of the daemon's watchdog (daemon/watchdog/loop-watch.ts). */
export interface StallRecord {
  ms: number;
  busyMs: number;
  runQueueMs: number;
  /** Of the window the turn ended, the main thread's time on a CPU (where schedstat tells). */
  cpuMs?: number;
  cause: string;
  conn?: string;
  request?: string | number;
}

/** A daemon whose stalls the suite checks (TestDaemon). */
export interface WatchedDaemon {
  readonly stalls: StallRecord[];
  /** Set by a test that stalls its daemon on purpose: those stalls fail nothing. */
  stallsExpected: boolean;
}

/**
 * The suite's budget for one event-loop turn of a daemon a test started (test/helpers/watchdog-setup.ts).
 * The daemon warns at 100 ms; the budget leaves room for a loaded CI machine (2 cores, test files
 * in parallel), where the same work takes longer than on a quiet one. Time the daemon waited for
 * a CPU is already left out of `busyMs` (daemon/watchdog/loop-watch.ts), so only turns the daemon
 * itself spent count: on a CPU, or blocked in a synchronous call. HOTLINE_WATCHDOG_BUDGET_MS overrides it.
 */
export const STALL_BUDGET_MS = Number(process.env.HOTLINE_WATCHDOG_BUDGET_MS) || 250;

/** Every daemon started in this test file, for the check in watchdog-setup.ts. */
export const watchedDaemons: WatchedDaemon[] = [];

/** The daemon's stalls from index `from` on that are over the budget. */
export function stallsOverBudget(daemon: WatchedDaemon, from = 0): StallRecord[] {
  return daemon.stalls.slice(from).filter((s) => s.busyMs > STALL_BUDGET_MS);
}

/** One line for a failure message: how long, and whom the daemon blamed. */
export function describeStall(s: StallRecord): string {
  const who = [s.conn && `conn ${s.conn}`, s.request !== undefined && `request ${JSON.stringify(s.request)}`].filter(Boolean).join(", ");
  const cpu = s.cpuMs === undefined ? "" : `, ${s.cpuMs} ms on a CPU`;
  return `${s.busyMs} ms turn (${s.ms} ms late, ${s.runQueueMs} ms of it waiting for a CPU${cpu}): ${s.cause}${who ? ` (${who})` : ""}`;
}

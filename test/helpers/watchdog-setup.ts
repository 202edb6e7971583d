import { afterAll, afterEach } from "vitest";
import { describeStall, STALL_BUDGET_MS, type StallRecord, stallsOverBudget, watchedDaemons } from "./stalls.js";

/**
 * The suite's stall check (vitest setupFiles): a test during which a daemon it started (TestDaemon)
 * spent one event-loop turn over STALL_BUDGET_MS fails, naming what the daemon blamed; a stall
 * logged after the file's last test fails the file in afterAll.
 * HOTLINE_WATCHDOG_REPORT=1 prints the stalls instead of failing (to survey a whole run).
 */
const reportOnly = process.env.HOTLINE_WATCHDOG_REPORT === "1";
const checked = new WeakMap<object, number>();

/** Stalls over budget logged since the last check, by daemons whose tests do not expect them. */
function newStalls(): StallRecord[] {
  return watchedDaemons.flatMap((daemon) => {
    const from = checked.get(daemon) ?? 0;
    checked.set(daemon, daemon.stalls.length);
    return daemon.stallsExpected ? [] : stallsOverBudget(daemon, from);
  });
}

function check(where: string): void {
  const stalls = newStalls();
  if (!stalls.length) return;
  const lines = stalls.map((s) => `  ${describeStall(s)}`).join("\n");
  const message = `hotline watchdog: ${where}: a daemon's event loop stalled over ${STALL_BUDGET_MS} ms:\n${lines}`;
  if (reportOnly) process.stderr.write(`${message}\n`);
  else throw new Error(message);
}

afterEach((context) => check(`${context.task.file?.name ?? "?"} > ${context.task.name}`));
afterAll((suite) => check(`${suite.name} (after its tests)`));

/**
 * A turn of the event loop that starts many processes (a burst of `shell` requests read from many
 * sockets at once) would hold every other client for the whole burst: each spawn waits for its
 * child's exec. Work that calls `untilTurnHasRoom()` first runs while the turn has spent less than
 * TURN_BUDGET_MS since the first such call, and otherwise waits for a later turn, in the order it
 * asked. Each waiter resumes in a check-phase callback of its own, so the synchronous work it does
 * after resuming is done before the next one measures the turn.
 */
export const TURN_BUDGET_MS = 20;

let turnStartedAt: number | undefined;
let waiting: Array<() => void> = [];

function release(): void {
  turnStartedAt = undefined;
  const ready = waiting;
  waiting = [];
  for (const resume of ready) setImmediate(resume);
}

/** Undefined while this turn has room and nothing waits ahead (no await needed); else a promise for a later turn. */
export function untilTurnHasRoom(): Promise<void> | undefined {
  const now = performance.now();
  if (turnStartedAt === undefined) {
    turnStartedAt = now;
    setImmediate(release);
  }
  if (waiting.length === 0 && now - turnStartedAt < TURN_BUDGET_MS) return undefined;
  return new Promise<void>((resolve) => waiting.push(resolve)).then(() => untilTurnHasRoom());
}

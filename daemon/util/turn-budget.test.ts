import { describe, expect, it } from "vitest";
import { TURN_BUDGET_MS, untilTurnHasRoom } from "./turn-budget.js";

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a synchronous piece of work, like a spawn
  }
};

describe("the turn budget", () => {
  it("lets work run at once while the turn has room, then spreads the rest over later turns, in order", async () => {
    const ran: Array<{ index: number; turn: number }> = [];
    // A timer fires once per turn of the loop at most: work that shares its count shared a turn.
    let turn = 0;
    const ticker = setInterval(() => turn++, 1);
    const jobs = Array.from({ length: 40 }, async (_, index) => {
      const wait = untilTurnHasRoom();
      if (wait) await wait;
      busy(5);
      ran.push({ index, turn });
    });
    await Promise.all(jobs);
    clearInterval(ticker);
    expect(ran.map((r) => r.index)).toEqual([...Array(40).keys()]);
    // 40 pieces of 5 ms cannot share one turn of TURN_BUDGET_MS: at most budget/5 + 1 per turn.
    const perTurn = new Map<number, number>();
    for (const r of ran) perTurn.set(r.turn, (perTurn.get(r.turn) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(TURN_BUDGET_MS / 5 + 1);
    expect(perTurn.size).toBeGreaterThan(1);
  });

  it("answers undefined (no await, no delay) for a lone piece of work", () => {
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect(untilTurnHasRoom()).toBeUndefined();
        resolve();
      }, 5),
    );
  });
});

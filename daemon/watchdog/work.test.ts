import { describe, expect, it, vi } from "vitest";
import { WorkTracker } from "./work.js";

describe("WorkTracker.blame", () => {
  it("names the timed stretch that filled most of the turn, with its connection and request", () => {
    const tracker = new WorkTracker();
    const since = performance.now();
    const slow = tracker.begin("action files.edit", "c1", 7);
    tracker.begin("action jobs.wait", "c2", 1);
    tracker.spent(slow, 180);
    expect(tracker.blame(since, 200)).toEqual({ cause: "action files.edit", conn: "c1", request: 7 });
  });

  it("names many stretches of one kind that together filled the turn", () => {
    const tracker = new WorkTracker();
    for (let i = 0; i < 50; i++) tracker.spent(tracker.begin("action shell", `c${i}`, 1), 6);
    tracker.spent(tracker.begin("action state.info"), 20);
    expect(tracker.blame(0, 400)).toEqual({ cause: "action shell ×50" });
  });

  it("else what was in flight during the turn, and what ended in it", () => {
    const tracker = new WorkTracker();
    const old = tracker.begin("action state.info");
    tracker.end(old);
    const since = performance.now();
    const edit = tracker.begin("action files.edit", "c1", 7);
    tracker.spent(edit, 5); // a short timed stretch: the rest of the turn ran untimed
    expect(tracker.blame(since, 300)).toEqual({ cause: "action files.edit (in flight)", conn: "c1", request: 7 });
    const http = tracker.begin("http /mcp");
    tracker.end(http);
    expect(tracker.blame(since, 300)).toEqual({
      cause: "one of: action files.edit, http /mcp",
      inflight: ["action files.edit", "http /mcp"],
    });
  });

  it("else the last work that ran, and a punctual turn starts a new window", () => {
    const tracker = new WorkTracker();
    const a = tracker.begin("action shell");
    tracker.spent(a, 400);
    tracker.end(a);
    tracker.reset();
    expect(tracker.blame(performance.now() + 1, 300)).toEqual({ cause: "unknown: last action shell" });
    expect(new WorkTracker().blame(0, 300)).toEqual({ cause: "unknown: nothing tracked ran" });
  });
});

describe("WorkTracker.timed", () => {
  it("counts a stretch nested in another for itself only, so the turn is blamed on what did the work", () => {
    // A clock the test moves: `busy(ms)` is that much work done.
    let now = 1000;
    const clock = vi.spyOn(performance, "now").mockImplementation(() => now);
    const busy = (ms: number): void => void (now += ms);
    try {
      const tracker = new WorkTracker();
      const outer = { label: "http front door" };
      const route = tracker.begin("http /mcp");
      tracker.timed(outer, () => {
        busy(2);
        tracker.timed(route, () => busy(30));
      });
      expect(tracker.blame(0, 32)).toMatchObject({ cause: "http /mcp" });
      tracker.timed(outer, () => {
        busy(30);
        tracker.timed(route, () => busy(2));
      });
      expect(tracker.blame(0, 32)).toMatchObject({ cause: "http front door" });
      // Stretches after a nested one start from nothing nested.
      tracker.timed(outer, () => busy(20));
      expect(tracker.blame(0, 20)).toMatchObject({ cause: "http front door" });
    } finally {
      clock.mockRestore();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadlines } from "./deadlines.js";

describe("Deadlines", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("fires each deadline at its time, in order, and never a cancelled one", () => {
    const deadlines = new Deadlines();
    const fired: string[] = [];
    deadlines.add(300, () => fired.push("300"));
    const cancel = deadlines.add(100, () => fired.push("100"));
    deadlines.add(200, () => fired.push("200"));
    cancel();
    vi.advanceTimersByTime(199);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["200"]);
    // A deadline added later but due earlier moves the one timer forward.
    deadlines.add(10, () => fired.push("10"));
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(["200", "10"]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(["200", "10", "300"]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

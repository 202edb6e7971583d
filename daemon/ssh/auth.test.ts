import { describe, expect, it } from "vitest";
import { RefusalLog } from "./auth.js";

describe("RefusalLog", () => {
  it("logs a source's refusals one by one up to its allowance, then once, then not until its window ends; others unaffected", () => {
    const log = new RefusalLog(3, 1000);
    expect([1, 2, 3].map(() => log.failed("10.0.0.1", 100))).toEqual(["log", "log", "log"]);
    expect(log.failed("10.0.0.1", 200)).toBe("first-unlogged");
    expect(log.failed("10.0.0.1", 300)).toBe("quiet");
    expect(log.failed("10.0.0.2", 300)).toBe("log");
    expect(log.failed("10.0.0.1", 1100)).toBe("log");
  });

  it("remembers a bounded number of sources", () => {
    const log = new RefusalLog(1, 60_000);
    for (let i = 0; i < 10_000; i++) log.failed(`a${i}`, 0);
    expect((log as unknown as { failures: Map<string, unknown> }).failures.size).toBeLessThanOrEqual(4096);
  });
});

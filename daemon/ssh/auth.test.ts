import { describe, expect, it } from "vitest";
import { RefusalLimiter } from "./auth.js";

describe("RefusalLimiter", () => {
  it("refuses an address past its allowance of failures until its window ends, others unaffected", () => {
    const limiter = new RefusalLimiter(3, 1000);
    for (let i = 0; i < 3; i++) {
      expect(limiter.allows("10.0.0.1", 100)).toBe(true);
      limiter.failed("10.0.0.1", 100);
    }
    expect(limiter.allows("10.0.0.1", 500)).toBe(false);
    expect(limiter.allows("10.0.0.2", 500)).toBe(true);
    expect(limiter.allows("10.0.0.1", 1100)).toBe(true);
  });

  it("remembers a bounded number of addresses", () => {
    const limiter = new RefusalLimiter(1, 60_000);
    for (let i = 0; i < 10_000; i++) limiter.failed(`a${i}`, 0);
    expect((limiter as unknown as { failures: Map<string, unknown> }).failures.size).toBeLessThanOrEqual(4096);
  });
});

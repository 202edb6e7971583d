import { describe, expect, it } from "vitest";
import { BufferPool } from "./buffer-pool.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("BufferPool", () => {
  it("reuses given buffers, keeps at most max, and lets all go once idle", async () => {
    const pool = new BufferPool(1024, 2, 30);
    const [a, b, c] = [pool.take(), pool.take(), pool.take()];
    expect(a.length).toBe(1024);
    for (const buffer of [a, b, c]) pool.give(buffer);
    expect(pool.held).toBe(2);
    expect([a, b]).toContain(pool.take()); // reused, not fresh
    for (let waited = 0; pool.held > 0 && waited < 2000; waited += 10) await sleep(10);
    expect(pool.held).toBe(0);
  });

  it("keeps its buffers while they are still being taken", async () => {
    const pool = new BufferPool(1024, 4, 200);
    pool.give(pool.take());
    for (let i = 0; i < 6; i++) {
      await sleep(50);
      pool.give(pool.take()); // in use every 50 ms: never idle for 200 ms
    }
    expect(pool.held).toBe(1);
  });
});

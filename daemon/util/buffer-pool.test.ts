import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BufferPool } from "./buffer-pool.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Anonymous kB of this process that a fork copies, and that it does not (VmFlags `dc`). */
function anonymousKb(): { copied: number; notCopied: number } {
  let anon = 0;
  const kb = { copied: 0, notCopied: 0 };
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    if (line.startsWith("Anonymous:")) anon = Number(line.split(/\s+/)[1]);
    else if (line.startsWith("VmFlags:")) {
      if (/\bdc\b/.test(line)) kb.notCopied += anon;
      else kb.copied += anon;
    }
  }
  return kb;
}

describe("BufferPool", () => {
  it("hands out at most max buffers, takes back only its own, and lets all go once idle", async () => {
    const pool = new BufferPool(1024, 2, 30);
    const [a, b] = [pool.take()!, pool.take()!];
    expect(a.length).toBe(1024);
    expect(pool.take()).toBeUndefined(); // all in use: the caller allocates what it needs
    pool.give(Buffer.alloc(1024)); // not one of its own
    expect(pool.held).toBe(0);
    pool.give(a);
    pool.give(b);
    expect(pool.held).toBe(2);
    expect([a, b]).toContain(pool.take()); // reused, not fresh
    for (let waited = 0; pool.held > 0 && waited < 2000; waited += 10) await sleep(10);
    expect(pool.held).toBe(0);
    expect(pool.forkFree).toBe(false);
    pool.give(b); // one of a generation let go
    expect(pool.held).toBe(0);
  });

  it("keeps its buffers while they are still being taken", async () => {
    const pool = new BufferPool(1024, 4, 200);
    pool.give(pool.take()!);
    for (let i = 0; i < 6; i++) {
      await sleep(50);
      pool.give(pool.take()!); // in use every 50 ms: never idle for 200 ms
    }
    expect(pool.held).toBe(4);
  });

  it.skipIf(!existsSync("/proc/self/smaps"))("holds its buffers in memory that a fork does not copy", () => {
    const before = anonymousKb();
    const pool = new BufferPool(1024 * 1024, 8, 60_000);
    const buffers = Array.from({ length: 8 }, () => pool.take()!.fill(7));
    const after = anonymousKb();
    expect(pool.forkFree).toBe(true);
    expect(after.notCopied - before.notCopied).toBeGreaterThanOrEqual(8 * 1024);
    expect(after.copied - before.copied).toBeLessThan(2 * 1024);
    for (const buffer of buffers) pool.give(buffer);
    expect(pool.held).toBe(8);
  });
});

import { describe, expect, it } from "vitest";
import { KeyedMutex, Mutex } from "./mutex.js";

describe("Mutex", () => {
  it("hands the lock to waiters first in, first out", async () => {
    const mutex = new Mutex();
    const order: number[] = [];
    await mutex.lock();
    const waiters = [1, 2, 3].map((n) => mutex.lock().then(() => order.push(n)));
    for (let i = 0; i < 3; i++) {
      mutex.unlock();
      await waiters[i];
    }
    expect(order).toEqual([1, 2, 3]);
    expect(mutex.busy).toBe(true);
    mutex.unlock();
    expect(mutex.busy).toBe(false);
  });

  it("a waiter whose signal aborts leaves the queue with the signal's reason", async () => {
    const mutex = new Mutex();
    await mutex.lock();
    const ac = new AbortController();
    const gaveUp = mutex.lock(ac.signal);
    const next = mutex.lock();
    ac.abort(new Error("deadline"));
    await expect(gaveUp).rejects.toThrow("deadline");
    mutex.unlock();
    await next; // the aborted waiter was skipped, not handed the lock
    expect(mutex.busy).toBe(true);
  });
});

describe("KeyedMutex", () => {
  it("runs tasks of one key one at a time, of different keys at once, and forgets idle keys", async () => {
    const locks = new KeyedMutex();
    let releaseA!: () => void;
    const heldA = new Promise<void>((resolve) => (releaseA = resolve));
    const events: string[] = [];
    const first = locks.run("a", async () => {
      events.push("a1 start");
      await heldA;
      events.push("a1 end");
    });
    const second = locks.run("a", async () => void events.push("a2"));
    await locks.run("b", async () => void events.push("b"));
    expect(locks.busy("a")).toBe(true);
    expect(locks.size).toBe(1);
    releaseA();
    await Promise.all([first, second]);
    expect(events).toEqual(["a1 start", "b", "a1 end", "a2"]);
    expect(locks.size).toBe(0);
  });

  it("a failed or aborted task releases the key", async () => {
    const locks = new KeyedMutex();
    await expect(locks.run("k", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    const release = await locks.lock("k");
    const ac = new AbortController();
    const waiting = locks.lock("k", ac.signal);
    ac.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
    release();
    expect(locks.busy("k")).toBe(false);
  });
});

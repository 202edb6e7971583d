/** A first-in first-out mutex whose waiters can give up when their signal aborts. */
export class Mutex {
  private held = false;
  private readonly waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];

  /** Whether someone holds it (anyone waiting implies that). */
  get busy(): boolean {
    return this.held;
  }

  /** Resolves once the lock is ours; rejects with the signal's reason if it aborts first. */
  async lock(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Hands the lock to the longest waiter, or frees it. */
  unlock(): void {
    const next = this.waiters.shift();
    if (next) next.resolve();
    else this.held = false;
  }
}

/** One FIFO mutex per key (two prepares of one workspace, two writers of one repository never overlap); a key nobody uses costs nothing. */
export class KeyedMutex {
  private readonly entries = new Map<string, { mutex: Mutex; users: number }>();

  /** Waits for the key's lock; resolves with its release (call it exactly once). */
  async lock(key: string, signal?: AbortSignal): Promise<() => void> {
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { mutex: new Mutex(), users: 0 }));
    entry.users += 1;
    const done = (): void => {
      entry.users -= 1;
      if (entry.users === 0 && this.entries.get(key) === entry) this.entries.delete(key);
    };
    try {
      await entry.mutex.lock(signal);
    } catch (error) {
      done();
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.mutex.unlock();
      done();
    };
  }

  /** Runs task while holding the key's lock, releasing it however the task ends. */
  async run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.lock(key, signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  /** How many keys have a task holding or waiting. */
  get size(): number {
    return this.entries.size;
  }

  /** Whether a task holds or waits for the key. */
  busy(key: string): boolean {
    return this.entries.has(key);
  }
}

/** Runs tasks one at a time per key (two prepares of one workspace never overlap). */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(task);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** How many keys have a task running or waiting. */
  get size(): number {
    return this.tails.size;
  }

  /** Whether a task holds or waits for the key. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }
}

/** Remembers the job running for an identity, so an identical request joins it (single-flight). */
export class SingleFlight<V> {
  private readonly running = new Map<string, V>();

  get(identity: string): V | undefined {
    return this.running.get(identity);
  }

  /** Registers `value` until `done` settles. */
  track(identity: string, value: V, done: Promise<unknown>): void {
    this.running.set(identity, value);
    void done.finally(() => {
      if (this.running.get(identity) === value) this.running.delete(identity);
    });
  }
}

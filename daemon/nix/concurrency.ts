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

/**
 * A reading of something that changes (the listen table, the port list), shared by its callers:
 * each gets a reading begun after it asked (so what changed before the call is seen), and every
 * caller that asks while one is under way gets the same next one. However many ask, at most one
 * reading runs and one waits.
 */
export class Shared<T> {
  private running: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly reader: () => Promise<T>) {}

  read(): Promise<T> {
    if (!this.running) return this.start();
    this.next ??= this.running.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  private startNext(): Promise<T> {
    this.next = undefined;
    return this.start();
  }

  private start(): Promise<T> {
    const reading = this.reader().finally(() => {
      if (this.running === reading) this.running = undefined;
    });
    this.running = reading;
    return reading;
  }
}

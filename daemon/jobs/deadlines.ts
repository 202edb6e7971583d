/**
 * Many timeouts through one timer. A Node timer whose list empties is torn down, and the next one
 * of that duration rebuilds it — measurable on every `wait` reply (~0.1–0.2 ms a job). Here a
 * timeout that ends early only drops out of a set; the one timer is moved only when a new
 * deadline comes before it.
 */
export class Deadlines {
  private readonly pending = new Set<{ at: number; fire: () => void }>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  /** Calls `fire` after `ms` unless the returned cancel runs first. */
  add(ms: number, fire: () => void): () => void {
    const entry = { at: Date.now() + ms, fire };
    this.pending.add(entry);
    if (entry.at < this.timerAt) this.schedule(entry.at);
    return () => {
      this.pending.delete(entry);
    };
  }

  private schedule(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private sweep(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const entry of this.pending) {
      if (entry.at <= now) {
        this.pending.delete(entry);
        entry.fire();
      } else next = Math.min(next, entry.at);
    }
    if (next !== Infinity) this.schedule(next);
  }
}

/** A fixed number of the newest items, oldest first: the window of samples, whatever the daemon's uptime. */
export class Ring<T extends { at: number }> {
  private readonly items: Array<T | undefined>;
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
  }

  /** The newest item, if any. */
  last(): T | undefined {
    return this.count === 0 ? undefined : this.items[(this.next - 1 + this.capacity) % this.capacity];
  }

  /**
   * The items taken after `sinceMs` (all without it), oldest first, at most `limit` of them (the
   * newest); `more` when older ones after `sinceMs` were left out.
   */
  since(sinceMs: number | undefined, limit: number): { items: T[]; more: boolean } {
    const out: T[] = [];
    // From the newest back: stop at the limit or at the first item not after sinceMs (items are in time order).
    for (let i = 1; i <= this.count; i++) {
      const item = this.items[(this.next - i + this.capacity) % this.capacity]!;
      if (sinceMs !== undefined && item.at <= sinceMs) break;
      if (out.length === limit) return { items: out.reverse(), more: true };
      out.push(item);
    }
    return { items: out.reverse(), more: false };
  }
}

import { collectAllGarbage } from "./young-gc.js";

/** How long a pool keeps its buffers after the last one was taken. */
const IDLE_MS = 2000;

/**
 * Reusable buffers of one size (fresh 1 MiB buffers cost page faults and GC work on every frame),
 * at most `max` of them, all let go once the pool has been idle for IDLE_MS. Held buffers are
 * memory a fork copies, and every job start is a fork of the daemon: 8 MiB held after one big
 * follow made every later start ~0.3 ms slower. Letting go is followed by one full collection,
 * since the buffers live in V8's old generation by then and nothing else would free them while
 * the daemon is idle.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  private lastTaken = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly size: number,
    private readonly max: number,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** A buffer of `size` bytes with unspecified contents. */
  take(): Buffer {
    this.lastTaken = performance.now();
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  /** Gives a buffer from take() back once nothing refers to it any more. */
  give(buffer: Buffer): void {
    if (this.free.length < this.max) this.free.push(buffer);
    this.timer ??= setTimeout(() => this.sweep(), this.idleMs).unref();
  }

  /** Buffers held now (for tests). */
  get held(): number {
    return this.free.length;
  }

  private sweep(): void {
    this.timer = undefined;
    const idleFor = performance.now() - this.lastTaken;
    if (idleFor < this.idleMs) {
      this.timer = setTimeout(() => this.sweep(), this.idleMs - idleFor).unref();
      return;
    }
    if (this.free.length === 0) return;
    this.free.length = 0;
    collectAllGarbage();
  }
}

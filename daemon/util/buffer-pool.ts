import { collectAllGarbage } from "./young-gc.js";

/**
 * How long a pool keeps its buffers after the last one was taken: long enough that a job printing a
 * line every few seconds keeps its stage pool instead of letting it go (and collecting) each time.
 */
const IDLE_MS = 10_000;
/** Pools let go within this of each other share one full collection. */
const COLLECT_DELAY_MS = 100;
let collectTimer: NodeJS.Timeout | undefined;

/** One full collection soon, shared by every pool let go meanwhile (each one is a main-thread pause). */
function collectSoon(): void {
  if (collectTimer) return;
  collectTimer = setTimeout(() => {
    collectTimer = undefined;
    collectAllGarbage();
  }, COLLECT_DELAY_MS).unref();
}
const WASM_PAGE = 64 * 1024;

type MemoryConstructor = new (descriptor: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
/** Absent under --jitless, which has no WebAssembly. */
const WasmMemory = (globalThis as { WebAssembly?: { Memory: MemoryConstructor } }).WebAssembly?.Memory;
let slabsWork = WasmMemory !== undefined;

/**
 * `bytes` of memory that a fork does not copy, or undefined where there is none to be had. V8 maps
 * WebAssembly memory MADV_DONTFORK (smaps: `dc`), while a Buffer's memory comes from malloc, whose
 * pages a fork copies (~40 µs per MB on these machines) and which glibc rarely hands back once the
 * heap around it is in use. Every job start is a fork of the daemon.
 */
function dontForkSlab(bytes: number): ArrayBuffer | undefined {
  if (!slabsWork) return undefined;
  try {
    const pages = Math.ceil(bytes / WASM_PAGE);
    return new WasmMemory!({ initial: pages, maximum: pages }).buffer;
  } catch {
    slabsWork = false;
    return undefined;
  }
}

/**
 * Reusable buffers of one size (fresh 1 MiB buffers cost page faults and GC work on every frame):
 * `max` of them, cut from one slab of memory a fork does not copy (see dontForkSlab), so holding them
 * costs job starts nothing. When all are in use take() has none: the caller allocates what it needs,
 * never a pool-sized buffer for a small piece (a socket's queue holds the whole buffer while counting
 * the piece). The buffers are let go once the pool has been idle for IDLE_MS, followed by a full
 * collection that unmaps the slab (nothing else would collect it in an idle daemon).
 */
export class BufferPool {
  /** The buffers of the current generation: only they come back into `free`. */
  private members: WeakSet<Buffer> | undefined;
  private slab: ArrayBuffer | undefined;
  private readonly free: Buffer[] = [];
  private lastTaken = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly size: number,
    private readonly max: number,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** A buffer of `size` bytes with unspecified contents, or undefined when every one is in use. */
  take(): Buffer | undefined {
    this.lastTaken = performance.now();
    if (!this.members) this.fill();
    return this.free.pop();
  }

  /** Gives back a buffer from take() once nothing refers to it any more. */
  give(buffer: Buffer): void {
    if (this.members?.has(buffer)) this.free.push(buffer);
    this.timer ??= setTimeout(() => this.sweep(), this.idleMs).unref();
  }

  /** Buffers held now (for tests). */
  get held(): number {
    return this.free.length;
  }

  /** Whether the buffers live in memory a fork does not copy (for tests). */
  get forkFree(): boolean {
    return this.slab !== undefined;
  }

  /** A new generation: pieces of one slab, or (without WebAssembly) plain buffers. */
  private fill(): void {
    this.slab = dontForkSlab(this.size * this.max);
    this.members = new WeakSet();
    for (let i = 0; i < this.max; i++) {
      const buffer = this.slab ? Buffer.from(this.slab, i * this.size, this.size) : Buffer.allocUnsafeSlow(this.size);
      this.members.add(buffer);
      this.free.push(buffer);
    }
  }

  private sweep(): void {
    this.timer = undefined;
    const idleFor = performance.now() - this.lastTaken;
    if (idleFor < this.idleMs) {
      this.timer = setTimeout(() => this.sweep(), this.idleMs - idleFor).unref();
      return;
    }
    if (!this.members) return;
    this.members = undefined;
    this.slab = undefined;
    this.free.length = 0; // buffers still in use are dropped when given back
    collectSoon();
  }
}

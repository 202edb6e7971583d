import { BufferPool } from "../../util/buffer-pool.js";

/**
 * Appended bytes are staged and written to their segment in pieces of up to this size. Pipes hand
 * over 4–64 KiB at a time, and the page cache keeps a file in folios as large as the writes that
 * made it: a log written in 16 KiB pieces is copied out at ~14 GB/s, one written in 1 MiB pieces at
 * ~26 GB/s, and copying out is what a follower reading a finished job spends most of its time on.
 */
const STAGE_BYTES = 1024 * 1024;
/** Staged bytes wait at most this long for their write: all a crash of the daemon can cost. */
export const STAGE_MS = 5;
/** Stages of 16 jobs printing at once come from the pool; more get a small one each. */
const stagePool = new BufferPool(STAGE_BYTES, 16);
/** The stage of a job beyond the pool's 16: a fresh 1 MiB every 5 ms for a job printing a line at a time would be garbage. */
const SMALL_STAGE_BYTES = 64 * 1024;

/**
 * The last bytes of a log, not written yet. The staging rule: what a reader is about to see is
 * written first — an append a live follower will see at once writes what is staged before itself
 * (`OutputLog.append(..., now)`), and a read that reaches staged bytes writes them first
 * (`reaches`); otherwise they are written when the stage is full or STAGE_MS after the first.
 */
export class Stage {
  private buffer: Buffer | undefined;
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `due`: writes the stage when its STAGE_MS have passed (and reports what fails: nobody is there to throw to). */
  constructor(private readonly due: () => void) {}

  /** How many bytes wait. */
  get size(): number {
    return this.bytes;
  }

  /** Whether the stage has no room left: write it before staging more. */
  get full(): boolean {
    return this.buffer !== undefined && this.bytes === this.buffer.length;
  }

  /** Whether a read up to log offset `readEnd` reaches staged bytes of a log that ends at `logEnd`. */
  reaches(readEnd: number, logEnd: number): boolean {
    return this.bytes > 0 && readEnd > logEnd - this.bytes;
  }

  /** Copies up to `length` bytes of `data` from `from` into a stage that is not full; returns how many it took. */
  take(data: Buffer, from: number, length: number): number {
    this.buffer ??= stagePool.take() ?? Buffer.allocUnsafe(SMALL_STAGE_BYTES);
    const n = data.copy(this.buffer, this.bytes, from, from + Math.min(length, this.buffer.length - this.bytes));
    this.bytes += n;
    this.timer ??= setTimeout(this.due, STAGE_MS).unref();
    return n;
  }

  /**
   * Hands the staged bytes to `write` (which returns how many it wrote) until all are written; the
   * stage is empty after, also when `write` throws: `lost` is told how many bytes it did not take.
   */
  drain(write: (buffer: Buffer, offset: number, length: number) => number, lost: (bytes: number) => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const buffer = this.buffer;
    const total = this.bytes;
    if (!buffer || total === 0) return;
    let done = 0;
    try {
      while (done < total) done += write(buffer, done, total - done);
    } catch (err) {
      lost(total - done);
      throw err;
    } finally {
      this.buffer = undefined;
      this.bytes = 0;
      stagePool.give(buffer);
    }
  }
}

import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { ActionError } from "../../protocol/errors.js";
import { mainThreadRunQueueMs } from "../watchdog/sched-clock.js";
import type { StreamHash } from "./hash-thread.js";

const BATCH_BYTES = 1024 * 1024;
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** A synchronous batch write slower than this (the kernel throttling dirty pages) sends the next writes to the pool. */
const SYNC_WRITE_LIMIT_MS = 8;
/**
 * Pool writes in a row each faster than this (the stall passed: an ext4 journal commit, a discard
 * of a deleted file) bring the writes back to the main thread, where they cost less.
 */
const QUICK_WRITE_MS = 2;
const QUICK_WRITES_TO_RETURN = 8;

/**
 * Hands chunks to the disk in ~1 MiB batches while the network
 * keeps being read. A batch is written synchronously — a copy into the page cache, well under a
 * millisecond — because handing each one to the thread pool was measured to cost a third of the
 * download's CPU on two busy cores (a wake-up per batch, and the pool thread waits for a core);
 * once a write takes longer than SYNC_WRITE_LIMIT_MS (the disk is behind and the kernel throttles
 * writers) the next go through the pool one after another, and the reader waits only when more
 * than MAX_QUEUED_BYTES are queued, so memory stays bounded and the loop is never held; after
 * QUICK_WRITES_TO_RETURN quick pool writes in a row the disk has caught up and writing is
 * synchronous again (a single stall used to leave the rest of a 1 GiB download in the pool,
 * measured ~40% slower on two busy cores). Each batch is reported to the hash once it is on disk,
 * in file order (hash-thread.ts reads a large body back from the page cache on its own thread).
 */
export class BatchedSink {
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private queue: Promise<void> = Promise.resolve();
  private queuedBytes = 0;
  private synchronous = true;
  /** Pool writes in a row faster than QUICK_WRITE_MS. */
  private quickWrites = 0;
  constructor(
    private readonly handle: FileHandle,
    private readonly hash: StreamHash,
    /** Bytes on disk: everything written by completed batches. */
    public written: number,
  ) {}

  /** Bytes received so far, on disk or queued. */
  get received(): number {
    return this.written + this.queuedBytes + this.batchBytes;
  }

  async push(chunk: Buffer): Promise<void> {
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    if (this.batchBytes >= BATCH_BYTES) this.enqueue();
    if (this.queuedBytes > MAX_QUEUED_BYTES) await this.queue;
  }

  /** Writes what is left and waits for every write. */
  async drain(): Promise<void> {
    this.enqueue();
    await this.queue;
  }

  private enqueue(): void {
    if (this.batchBytes === 0) return;
    const buffers = this.batch;
    const bytes = this.batchBytes;
    this.batch = [];
    this.batchBytes = 0;
    const position = this.written + this.queuedBytes;
    if (this.synchronous && this.queuedBytes === 0) {
      const started = performance.now();
      const waitedBefore = mainThreadRunQueueMs();
      try {
        writeAllSync(this.handle.fd, buffers, position);
      } catch (err) {
        throw new ActionError("internal", `writing the download failed: ${(err as Error).message}`, { cause: err });
      }
      this.written += bytes;
      this.hash.wrote(buffers, this.written);
      // Time spent waiting for a CPU (a busy machine) is not the disk's: only the rest counts.
      const waited = mainThreadRunQueueMs() - waitedBefore;
      if (performance.now() - started - waited > SYNC_WRITE_LIMIT_MS) this.synchronous = false;
      return;
    }
    this.queuedBytes += bytes;
    this.queue = this.queue.then(async () => {
      const started = performance.now();
      try {
        await writeAll(this.handle, buffers, position);
      } catch (err) {
        throw new ActionError("internal", `writing the download failed: ${(err as Error).message}`, { cause: err });
      }
      this.written += bytes;
      this.queuedBytes -= bytes;
      this.hash.wrote(buffers, this.written);
      this.quickWrites = performance.now() - started < QUICK_WRITE_MS ? this.quickWrites + 1 : 0;
      if (this.quickWrites >= QUICK_WRITES_TO_RETURN) {
        this.synchronous = true;
        this.quickWrites = 0;
      }
    });
    // Observed by the next push/drain; this keeps a failed write from counting as unhandled meanwhile.
    this.queue.catch(() => undefined);
  }
}

async function writeAll(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  const { bytesWritten } = await handle.writev(buffers, position);
  const total = buffers.reduce((n, b) => n + b.length, 0);
  if (bytesWritten < total)
    await handle.write(Buffer.concat(buffers).subarray(bytesWritten), 0, total - bytesWritten, position + bytesWritten);
}

function writeAllSync(fd: number, buffers: Buffer[], position: number): void {
  let at = position;
  for (const b of buffers) {
    for (let offset = 0; offset < b.length; ) {
      const n = writeSync(fd, b, offset, b.length - offset, at);
      offset += n;
      at += n;
    }
  }
}

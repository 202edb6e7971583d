import type { Hash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { ActionError } from "../../protocol/errors.js";

const BATCH_BYTES = 1024 * 1024;
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/**
 * Hashes chunks in arrival order and hands them to the disk in ~1 MiB batches (one write after
 * another) while the network keeps being read; the reader waits only when more than
 * MAX_QUEUED_BYTES are queued for the disk, so memory stays bounded. (Hashing on a worker thread
 * was measured slower on two cores: the copy to the worker costs more than the overlap gains.)
 */
export class BatchedSink {
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private queue: Promise<void> = Promise.resolve();
  private queuedBytes = 0;
  constructor(
    private readonly handle: FileHandle,
    private readonly hash: Hash,
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
    this.queuedBytes += bytes;
    this.queue = this.queue.then(async () => {
      try {
        await writeAll(this.handle, buffers, position);
      } catch (err) {
        throw new ActionError("internal", `writing the download failed: ${(err as Error).message}`, { cause: err });
      }
      this.written += bytes;
      this.queuedBytes -= bytes;
    });
    // Observed by the next push/drain; this keeps a failed write from counting as unhandled meanwhile.
    this.queue.catch(() => undefined);
    for (const b of buffers) this.hash.update(b);
  }
}

async function writeAll(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  const { bytesWritten } = await handle.writev(buffers, position);
  const total = buffers.reduce((n, b) => n + b.length, 0);
  if (bytesWritten < total)
    await handle.write(Buffer.concat(buffers).subarray(bytesWritten), 0, total - bytesWritten, position + bytesWritten);
}

import { createHash, randomBytes, type Hash } from "node:crypto";
import { rm, type FileHandle } from "node:fs/promises";
import { ActionError } from "../../protocol/errors.js";
import { checkIfMatch, openTemp, publish, type PublishOptions, type Published } from "./publish.js";

/** Open chunked uploads one connection may hold at once. */
export const MAX_UPLOADS_PER_CONNECTION = 8;
/** Bytes all open uploads of one connection may hold on disk before they are published. */
export const MAX_UPLOAD_BYTES_PER_CONNECTION = 8 * 1024 ** 3;
/** An upload with no chunk for this long is abandoned and its temporary file removed. */
export const UPLOAD_IDLE_MS = 5 * 60 * 1000;

/**
 * One chunked files.write: chunks are appended in order to a temporary sibling of the target
 * (hashed as they come), and the final chunk publishes it atomically. Until then the target is
 * untouched and nobody sees the partial file under its name.
 */
export class Upload {
  readonly id = `u${randomBytes(8).toString("hex")}`;
  received = 0;
  private readonly hash: Hash = createHash("sha256");
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Serializes chunks: a client may pipeline them, each must land after the one before. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    /** The path as the first chunk named it; later chunks must name it the same way. */
    readonly requested: string,
    readonly target: string,
    private readonly temp: string,
    private readonly handle: FileHandle,
    private readonly options: PublishOptions,
    private readonly onEnd: (upload: Upload) => void,
  ) {
    this.timer = setTimeout(() => void this.abandon().catch(() => undefined), UPLOAD_IDLE_MS);
    this.timer.unref();
  }

  static async start(requested: string, target: string, options: PublishOptions, onEnd: (upload: Upload) => void): Promise<Upload> {
    await checkIfMatch(target, options.ifMatch, options.signal);
    const { temp, handle } = await openTemp(target, options.parents);
    return new Upload(requested, target, temp, handle, options, onEnd);
  }

  /** Appends one chunk at `offset` (which must be what was received so far); the final one publishes. */
  chunk(offset: number, data: Buffer, final: boolean): Promise<Published | undefined> {
    const run = this.queue.then(() => this.append(offset, data, final));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async append(offset: number, data: Buffer, final: boolean): Promise<Published | undefined> {
    if (this.closed)
      throw new ActionError("not_found", `upload ${this.id} is no longer open; start the upload again without upload`, { path: "/upload" });
    if (offset !== this.received) {
      throw new ActionError(
        "conflict",
        `upload ${this.id} has ${this.received} bytes; send the chunk at offset ${this.received}, not ${offset}`,
        {
          path: "/offset",
          details: { received: this.received },
        },
      );
    }
    this.timer.refresh();
    try {
      await this.handle.write(data, 0, data.length, offset);
    } catch (err) {
      // Inside the queue: abandon() would wait on this very chunk.
      this.end();
      await this.discard();
      throw err;
    }
    this.hash.update(data);
    this.received += data.length;
    if (!final) return undefined;
    this.end();
    try {
      try {
        await this.handle.datasync();
      } finally {
        await this.handle.close();
      }
      return await publish(this.temp, this.target, this.hash.digest("hex"), this.options);
    } catch (err) {
      await rm(this.temp, { force: true });
      throw err;
    }
  }

  /** Drops the upload and its temporary file (connection closed, idle timeout, failed chunk). */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.end();
    await this.queue;
    await this.discard();
  }

  /** No more chunks: the timer stops and the session forgets the upload. */
  private end(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.onEnd(this);
  }

  private async discard(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}

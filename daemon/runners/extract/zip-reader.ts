import { readSync } from "node:fs";
import { Readable } from "node:stream";
import yauzl from "yauzl";

/**
 * A yauzl RandomAccessReader over a local file that reads synchronously through a small window
 * cache. yauzl's own fd reader costs a thread-pool round trip (and a stream) per central-directory
 * record and per local header; with tens of thousands of small entries that overhead, not the
 * inflating, dominated extraction time. Reads of a local file are short, so doing them inline is
 * cheaper than scheduling them.
 */

/** Aligned windows; several are kept because yauzl alternates between the central directory (at the end) and local headers. */
const WINDOW_BYTES = 256 * 1024;
const WINDOWS_KEPT = 4;
const STREAM_CHUNK_BYTES = 256 * 1024;

/** yauzl's reader interface plus a synchronous ranged read for small entries. */
export interface WindowedReader {
  read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void;
  close(callback: (err?: Error | null) => void): void;
  /** Exactly `length` bytes at `position`, or fewer at the end of the file. */
  readRange(position: number, length: number): Buffer;
}

interface ReaderBase {
  read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void;
  close(callback: (err?: Error | null) => void): void;
  _readStreamForRange(start: number, end: number): Readable;
}
const RandomAccessReader = (yauzl as unknown as { RandomAccessReader: new () => ReaderBase }).RandomAccessReader;

/** A reader for yauzl.fromRandomAccessReader over the open file `fd` of `size` bytes; the caller keeps and closes `fd`. */
export function openWindowedReader(fd: number, size: number): WindowedReader {
  return new SyncWindowedReader(fd, size);
}

class SyncWindowedReader extends RandomAccessReader implements WindowedReader {
  /** Most recently used last; keyed by the window's aligned start offset. */
  private readonly windows = new Map<number, Buffer>();

  constructor(
    private readonly fd: number,
    private readonly size: number,
  ) {
    super();
  }

  private windowAt(start: number): Buffer {
    const hit = this.windows.get(start);
    if (hit) {
      this.windows.delete(start);
      this.windows.set(start, hit);
      return hit;
    }
    const want = Math.min(WINDOW_BYTES, this.size - start);
    const fresh = Buffer.allocUnsafe(Math.max(want, 0));
    const got = want > 0 ? readSync(this.fd, fresh, 0, want, start) : 0;
    const window = fresh.subarray(0, got);
    this.windows.set(start, window);
    if (this.windows.size > WINDOWS_KEPT) this.windows.delete(this.windows.keys().next().value!);
    return window;
  }

  /** Copies `length` bytes at `position` into `buffer` from the cached windows. */
  private copy(buffer: Buffer, offset: number, length: number, position: number): number {
    let done = 0;
    while (done < length) {
      const at = position + done;
      const start = at - (at % WINDOW_BYTES);
      const window = this.windowAt(start);
      const from = at - start;
      if (from >= window.length) break;
      const n = Math.min(length - done, window.length - from);
      window.copy(buffer, offset + done, from, from + n);
      done += n;
    }
    return done;
  }

  readRange(position: number, length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    return out.subarray(0, this.copy(out, 0, length, position));
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null, bytesRead?: number) => void,
  ): void {
    let n: number;
    try {
      n = this.copy(buffer, offset, length, position);
    } catch (err) {
      setImmediate(callback, err as Error);
      return;
    }
    // yauzl expects an asynchronous callback; a microtask keeps the stack flat without a thread-pool hop.
    queueMicrotask(() => callback(null, n));
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const fd = this.fd;
    let position = start;
    return new Readable({
      highWaterMark: STREAM_CHUNK_BYTES,
      read() {
        if (position >= end) return void this.push(null);
        const chunk = Buffer.allocUnsafe(Math.min(STREAM_CHUNK_BYTES, end - position));
        try {
          const n = readSync(fd, chunk, 0, chunk.length, position);
          if (n === 0) return void this.destroy(new Error("unexpected end of file"));
          position += n;
          this.push(chunk.subarray(0, n));
        } catch (err) {
          this.destroy(err as Error);
        }
      },
    });
  }

  /** The descriptor belongs to the caller (it was checked to be a regular file there): only the cache goes. */
  override close(callback: (err?: Error | null) => void): void {
    this.windows.clear();
    setImmediate(callback);
  }
}

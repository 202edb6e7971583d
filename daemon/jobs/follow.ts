import { isUtf8 } from "node:buffer";
import type { OutputStream } from "../../protocol/common.js";
import type { WireError } from "../../protocol/errors.js";
import type { JobExitEvent, JobOutputEvent, ServerEvent } from "../../protocol/events.js";
import type { Job } from "./job.js";
import { BufferPool } from "../util/buffer-pool.js";
import { writeJsonStringBody } from "../util/json-bytes.js";
import { completeUtf8Length, encodeBytes } from "./utf8.js";
import { outputStats } from "./output-stats.js";

/** Where a follower's frames go: a connection that says when it can take more. */
export interface FollowSink {
  send(frame: ServerEvent): void;
  /** A ready binary frame (see binaryFrame); `sent` runs once the socket has taken it. */
  sendBinary(frame: Buffer, sent?: () => void): void;
  /** A ready text frame (JSON as UTF-8); `sent` runs once the socket has taken it. */
  sendText(frame: Buffer, sent?: () => void): void;
  /** False while the connection's send buffer is above its high-water mark. */
  readonly writable: boolean;
  /** Calls back once the buffer has drained below its low-water mark. */
  onDrain(callback: () => void): void;
  /** Runs `send` with the frames it sends going to the socket together, in one write. */
  batch(send: () => void): void;
}

const READ_CHUNK = 1024 * 1024;
/**
 * JSON output events carry at most 64 KiB: their text is a V8 string (twice: decoded, then
 * stringified), and strings above V8's regular object size (128 KiB) land in large-object space,
 * where 1 MiB strings made full garbage collections take most of the follower's time.
 */
const JSON_CHUNK = 64 * 1024;
/** The longest one catch-up slice keeps the event loop before it yields (the watchdog warns at 100 ms). */
const PUMP_SLICE_MS = 16;

/** What JSON pieces are read into: they are encoded (copied) at once, and a follower's pump is synchronous. */
const jsonScratch = Buffer.allocUnsafeSlow(JSON_CHUNK);

/** The JSON header of a binary job.output frame: the event without its inline data. */
export type BinaryOutputHeader = Omit<JobOutputEvent, "data" | "encoding">;

/** Frames of a full read: 8 of 1 MiB + 512 (8 MiB), none once followers are idle. */
const framePool = new BufferPool(READ_CHUNK + 512, 8);

/**
 * A binary output frame: a 4-byte big-endian header length, the header as JSON, then `length`
 * raw bytes that `fill` writes at the offset it is given (straight from disk, with no extra copy).
 * Frames of more than half a full read come from framePool while it has one, returned by `release`
 * once sent; smaller ones (live pieces) get a buffer of their own size.
 */
export function binaryFrame(
  header: BinaryOutputHeader,
  length: number,
  fill: (frame: Buffer, at: number) => number,
): { frame: Buffer; release: () => void } {
  const head = Buffer.from(JSON.stringify(header));
  const size = 4 + head.length + length;
  const pooled = size > framePool.size / 2 && size <= framePool.size ? framePool.take() : undefined;
  const buffer = pooled ?? Buffer.allocUnsafe(size);
  buffer.writeUInt32BE(head.length, 0);
  head.copy(buffer, 4);
  const got = fill(buffer, 4 + head.length);
  const release = (): void => {
    if (pooled) framePool.give(pooled);
  };
  return { frame: buffer.subarray(0, 4 + head.length + got), release };
}

/**
 * 72 text frames of 128.5 KiB (9 MiB, memory a fork does not copy), none once followers are idle:
 * a connection's 4 MiB send window holds up to 64 events of 64 KiB, and every full frame past the
 * pool is a fresh allocation (with only 32, garbage collection took 30 % of a JSON follower's time).
 */
const textPool = new BufferPool(2 * JSON_CHUNK + 512, 72);
const TEXT_TAIL = '","encoding":"utf8"}';

/**
 * A JSON `job.output` event for UTF-8 `data` of at most JSON_CHUNK bytes, escaped from bytes to
 * bytes into a buffer (see textPool) returned by `release` once sent; the same
 * text JSON.stringify would make, with no V8 string of the data. Undefined when `data` is not
 * valid UTF-8 or escapes to more than twice its size: the caller then takes the string path.
 */
export function textOutputFrame(header: object, data: Buffer): { frame: Buffer; release: () => void } | undefined {
  if (data.length > JSON_CHUNK || !isUtf8(data)) return undefined;
  const head = `${JSON.stringify(header).slice(0, -1)},"data":"`;
  // A full piece (a catch-up read) gets a pooled frame; a small live one a buffer of its own size.
  const pooled = data.length > JSON_CHUNK / 2 ? textPool.take() : undefined;
  const buffer = pooled ?? Buffer.allocUnsafe(Buffer.byteLength(head) + 2 * data.length + TEXT_TAIL.length);
  const release = (): void => {
    if (pooled) textPool.give(pooled);
  };
  const at = writeJsonStringBody(data, buffer, buffer.write(head, 0));
  if (at < 0 || at + TEXT_TAIL.length > buffer.length) {
    release();
    return undefined;
  }
  return { frame: buffer.subarray(0, at + buffer.write(TEXT_TAIL, at, "latin1")), release };
}

/**
 * Streams one job's log to one sink from an offset: live bytes go straight out while the sink keeps
 * up; when it falls behind, the follower stops taking live bytes and reads them back from disk at
 * its own pace, so a slow reader never slows the job or grows the daemon's memory.
 */
export class Follower {
  private cursor: number;
  private pumping = false;
  /** A catch-up gave the event loop back mid-log; its next slice is scheduled. */
  private yielded = false;
  private waitingForDrain = false;
  private closed = false;
  private readonly onOutput = (stream: OutputStream, offset: number, data: Buffer): void => this.live(stream, offset, data);
  // A job emits "progress" only after it set its record's progress.
  private readonly onProgress = (): void =>
    this.sendIfWritable({ event: "job.progress", job: this.job.id, progress: this.job.record.progress! });
  private readonly onState = (): void => this.sendIfWritable({ event: "job.state", job: this.job.id, state: this.job.state });
  private readonly onEnd = (): void => this.pump();
  private readonly onEvicted = (): void =>
    this.end({
      code: "not_found",
      message: `job ${this.job.id} was deleted by retention (only the newest finished jobs are kept) before this follower read all of its output`,
    });

  constructor(
    private readonly job: Job,
    private readonly sink: FollowSink,
    from: number,
    private readonly only: OutputStream | undefined,
    private readonly binary = false,
  ) {
    this.cursor = from;
  }

  /** Called when the follower stops for good (unfollow, disconnect, or after job.exit). */
  onClose: (() => void) | undefined;

  /** Begins sending; separate from construction so the action's reply goes out first. */
  start(): void {
    if (this.closed) return;
    this.job.on("output", this.onOutput);
    this.job.on("progress", this.onProgress);
    this.job.on("state", this.onState);
    this.job.on("end", this.onEnd);
    this.job.on("evicted", this.onEvicted);
    this.pump();
  }

  /** Stops sending; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.job.off("output", this.onOutput);
    this.job.off("progress", this.onProgress);
    this.job.off("state", this.onState);
    this.job.off("end", this.onEnd);
    this.job.off("evicted", this.onEvicted);
    this.onClose?.();
  }

  private sendIfWritable(frame: ServerEvent): void {
    // Progress and state are snapshots: a follower that is behind gets the final word with job.exit.
    if (!this.closed && this.sink.writable) this.sink.send(frame);
  }

  /** The last word: job.exit (with `error` when the follow stops short of the log's end), then close. */
  private end(error?: WireError): void {
    if (this.closed) return;
    const frame: JobExitEvent = { event: "job.exit", job: this.job.id, status: this.job.status(), next: this.cursor };
    this.sink.send(error ? { ...frame, error } : frame);
    this.close();
  }

  /** Runs one step of this follower; a failure ends this follower alone, never the daemon. */
  private guarded(step: () => void): void {
    try {
      step();
    } catch (err) {
      try {
        this.end({
          code: "unavailable",
          message: `could not read the output of job ${this.job.id}: ${(err as Error)?.message ?? String(err)}; jobs.output may still read what is kept`,
        });
      } catch {
        this.close();
      }
    }
  }

  private live(stream: OutputStream, offset: number, data: Buffer): void {
    this.guarded(() => this.liveStep(stream, offset, data));
  }

  private liveStep(stream: OutputStream, offset: number, data: Buffer): void {
    if (this.closed || this.pumping || this.waitingForDrain || this.yielded || offset !== this.cursor || !this.sink.writable) {
      if (!this.pumping) this.pumpStep();
      return;
    }
    if (this.only !== undefined && stream !== this.only) {
      this.cursor = offset + data.length;
      return;
    }
    const usable = this.binary ? data.length : completeUtf8Length(data);
    const head = usable > 0 && usable < data.length ? data.subarray(0, usable) : data;
    this.emitPiece(stream, offset, head);
    this.cursor = offset + head.length;
    if (head.length < data.length) this.pumpStep();
  }

  private emitPiece(stream: OutputStream, offset: number, data: Buffer): void {
    outputStats.readBytes += data.length;
    if (this.binary) {
      const { frame, release } = binaryFrame({ event: "job.output", job: this.job.id, stream, offset }, data.length, (buf, at) =>
        data.copy(buf, at),
      );
      this.sink.sendBinary(frame, release);
      return;
    }
    const header = { event: "job.output" as const, job: this.job.id, stream, offset };
    const text = textOutputFrame(header, data);
    if (text) return this.sink.sendText(text.frame, text.release);
    const { data: encoded, encoding } = encodeBytes(data);
    this.sink.send({ ...header, data: encoded, encoding });
  }

  /** Catches up from disk while the sink is writable; finishes with job.exit once the log is drained. */
  private pump(): void {
    // A catch-up turn sends several frames: one write for all of them costs the kernel less than one each.
    this.guarded(() => this.sink.batch(() => this.pumpStep()));
  }

  private pumpStep(): void {
    if (this.closed || this.pumping || this.waitingForDrain || this.yielded) return;
    this.pumping = true;
    const started = performance.now();
    try {
      const log = this.job.log;
      while (!this.closed && log && this.cursor < log.size) {
        // A client that reads as fast as loopback sends keeps the sink writable: without a time
        // slice one turn would send the whole log (40 MB as JSON: seconds) while everyone waits.
        if (performance.now() - started > PUMP_SLICE_MS) {
          this.yielded = true;
          setImmediate(() => {
            this.yielded = false;
            this.pump();
          });
          return;
        }
        if (!this.sink.writable) {
          this.waitingForDrain = true;
          this.sink.onDrain(() => {
            this.waitingForDrain = false;
            this.pump();
          });
          return;
        }
        if (this.binary) {
          const { spans, next } = log.spans(this.cursor, READ_CHUNK, this.only);
          if (next === this.cursor) break;
          let short = false;
          for (const span of spans) {
            const header: BinaryOutputHeader = { event: "job.output", job: this.job.id, stream: span.stream, offset: span.offset };
            let got = 0;
            const { frame, release } = binaryFrame(
              header,
              span.length,
              (buf, at) => (got = log.readInto(buf, at, span.offset, span.length)),
            );
            outputStats.readBytes += got;
            if (got > 0) this.sink.sendBinary(frame, release);
            else release();
            if (got < span.length) {
              // A segment vanished under the read: go on from the byte after the last one sent.
              this.cursor = span.offset + got;
              short = true;
              break;
            }
          }
          if (!short) this.cursor = next;
          continue;
        }
        const { pieces, next } = log.read(this.cursor, JSON_CHUNK, this.only, jsonScratch);
        if (next === this.cursor) break;
        for (const piece of pieces) {
          let data = piece.data;
          const isLast = piece === pieces.at(-1);
          if (isLast && next < log.size) {
            const usable = completeUtf8Length(data);
            if (usable > 0) data = data.subarray(0, usable);
          }
          this.emitPiece(piece.stream, piece.offset, data);
          if (isLast && data.length < piece.data.length) {
            this.cursor = piece.offset + data.length;
          } else this.cursor = next;
        }
        if (pieces.length === 0) this.cursor = next;
      }
      if (!this.closed && this.job.finished && (!log || this.cursor >= log.size)) this.end();
    } finally {
      this.pumping = false;
    }
  }
}

import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeSync, appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { forgetReader, readerFd } from "./reader-fds.js";
import type { OutputStream } from "../../protocol/common.js";

/** A run of consecutive bytes of one stream in the log. */
interface Run {
  start: number;
  length: number;
  stream: OutputStream;
}

interface Segment {
  start: number;
  length: number;
}

/** One stretch of a read: `length` bytes of a single stream at a log offset. */
export interface LogSpan {
  stream: OutputStream;
  offset: number;
  length: number;
}

/** One piece of a read: bytes of a single stream at a log offset. */
export interface LogPiece {
  stream: OutputStream;
  offset: number;
  data: Buffer;
}

const STREAM_CODES: readonly OutputStream[] = ["stdout", "stderr", "pty"];
const RECORD_BYTES = 24;

/**
 * A job's output as one ordered, byte-addressed log on disk. Bytes live in segment files named by
 * their first offset; the first half of the cap is kept as the head, and the newest segments as the
 * tail, so a runaway job keeps head + tail and the middle is counted in `omittedBytes`. Which stream
 * each byte came from is kept as runs in `runs.idx` (24-byte records: offset f64, length f64, stream u8).
 */
export class OutputLog {
  private readonly segments: Segment[] = [];
  private runs: Run[] = [];
  private openRun: Run | undefined;
  private fd: number | undefined;
  private end = 0;
  private readonly segmentSize: number;
  private readonly headLimit: number;

  /** The files a fresh log opens first; a directory made ahead of time holds them already. */
  static readonly INITIAL_FILES: readonly string[] = [segmentName(0), "runs.idx"];

  private dirReady = false;
  /** Counts segments found missing or short on read; a read that lost one retries on the new table. */
  private losses = 0;

  private constructor(
    private readonly dir: string,
    private readonly capBytes: number,
    private readonly makeDir: (dir: string) => void = (d) => mkdirSync(d, { recursive: true }),
  ) {
    this.segmentSize = Math.max(4096, Math.min(8 * 1024 * 1024, Math.floor(capBytes / 8)));
    this.headLimit = Math.max(this.segmentSize, Math.floor(capBytes / 2 / this.segmentSize) * this.segmentSize);
  }

  /** A fresh, writable log in `dir`; the directory is made (by `makeDir`) only when the first byte arrives. */
  static create(dir: string, capBytes: number, makeDir?: (dir: string) => void): OutputLog {
    return new OutputLog(dir, capBytes, makeDir);
  }

  /** Opens an existing log read-only (after a restart, or for a finished job). */
  static open(dir: string, capBytes: number): OutputLog {
    const log = new OutputLog(dir, capBytes);
    log.dirReady = true;
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      return log;
    }
    for (const name of names) {
      const m = /^seg-(\d+)\.log$/.exec(name);
      if (m) log.segments.push({ start: Number(m[1]), length: statSync(join(dir, name)).size });
    }
    log.segments.sort((a, b) => a.start - b.start);
    const last = log.segments.at(-1);
    log.end = last ? last.start + last.length : 0;
    log.runs = readRuns(join(dir, "runs.idx"));
    const covered = log.runs.length ? log.runs.at(-1)!.start + log.runs.at(-1)!.length : 0;
    // A daemon that died mid-run had not written its last run; attribute the rest to the last stream.
    if (covered < log.end) log.runs.push({ start: covered, length: log.end - covered, stream: log.runs.at(-1)?.stream ?? "stdout" });
    return log;
  }

  /** Total bytes ever written: the offset the next byte will get. */
  get size(): number {
    return this.end;
  }

  get omittedBytes(): number {
    return this.end - this.keptBytes;
  }

  /**
   * Appends bytes synchronously (the page cache makes this cheap) and returns their offset. A write
   * that fails (a full disk: ENOSPC) throws, and the log then holds exactly the bytes the kernel took.
   */
  append(stream: OutputStream, data: Buffer): number {
    const offset = this.end;
    let written = 0;
    try {
      while (written < data.length) {
        const seg = this.writableSegment();
        const room = this.segmentSize - seg.length;
        const n = writeSync(this.fd!, data, written, Math.min(room, data.length - written));
        seg.length += n;
        written += n;
        this.end += n;
      }
    } finally {
      if (written > 0) this.extendRun(stream, offset, written);
    }
    return offset;
  }

  /** Bytes of this log kept on disk. */
  get keptBytes(): number {
    let kept = 0;
    for (const s of this.segments) kept += s.length;
    return kept;
  }

  /** Flushes the run index and closes the file; the log stays readable. */
  close(): void {
    try {
      this.closeRun();
    } finally {
      if (this.fd !== undefined) {
        closeSync(this.fd);
        this.fd = undefined;
      }
    }
  }

  /**
   * Which bytes a read of up to `limit` bytes from `from` covers, as stretches of one stream each.
   * A `from` inside the omitted middle moves to the first kept byte; `next` is where the following
   * read should start. Bytes of other streams than `only` are skipped but still advance `next`.
   */
  spans(from: number, limit: number, only?: OutputStream): { spans: LogSpan[]; from: number; next: number } {
    let pos = Math.min(from, this.end);
    const firstKept = this.segments.find((s) => s.start + s.length > pos);
    if (firstKept && firstKept.start > pos) pos = firstKept.start;
    const start = pos;
    const spans: LogSpan[] = [];
    let budget = limit;
    let runIndex = this.findRun(pos);
    while (budget > 0 && pos < this.end && runIndex < this.runs.length) {
      const run = this.runs[runIndex]!;
      const runEnd = run.start + run.length;
      if (pos >= runEnd) {
        runIndex++;
        continue;
      }
      const segment = this.segments.find((s) => s.start <= pos && pos < s.start + s.length);
      if (!segment) break; // evicted while reading: the caller retries from `next`
      const n = Math.min(budget, runEnd - pos, segment.start + segment.length - pos);
      if (only === undefined || run.stream === only) {
        const prev = spans.at(-1);
        if (prev && prev.stream === run.stream && prev.offset + prev.length === pos) prev.length += n;
        else spans.push({ stream: run.stream, offset: pos, length: n });
        budget -= n;
      }
      pos += n;
    }
    return { spans, from: start, next: pos };
  }

  /**
   * The offset after which `count` bytes of `only` (or of any stream) remain to the end of the
   * log; fewer when the log holds fewer. It never reaches back across the omitted middle: then it
   * is the first kept byte after it.
   */
  tailStart(count: number, only?: OutputStream): number {
    let need = count;
    let pos = this.end;
    let segIndex = this.segments.length - 1;
    let runIndex = this.runs.length > 0 ? this.findRun(Math.max(0, pos - 1)) : -1;
    while (need > 0 && segIndex >= 0 && runIndex >= 0) {
      const segment = this.segments[segIndex]!;
      if (pos <= segment.start) {
        const previous = this.segments[segIndex - 1];
        if (!previous || previous.start + previous.length < segment.start) break; // the omitted middle
        segIndex--;
        continue;
      }
      const run = this.runs[runIndex]!;
      if (pos <= run.start) {
        runIndex--;
        continue;
      }
      const low = Math.max(segment.start, run.start);
      if (only === undefined || run.stream === only) {
        if (pos - low >= need) return pos - need;
        need -= pos - low;
      }
      pos = low;
    }
    return pos;
  }

  /**
   * Reads `length` log bytes at `offset` into `target` at `at`; returns how many it read. A
   * segment whose file has vanished (its job deleted under a reader) reads short and is dropped
   * from the table, so it counts as omitted from then on; it never throws for that.
   */
  readInto(target: Buffer, at: number, offset: number, length: number): number {
    let got = 0;
    while (got < length) {
      const pos = offset + got;
      const segment = this.segments.find((s) => s.start <= pos && pos < s.start + s.length);
      if (!segment) break;
      const want = Math.min(length - got, segment.start + segment.length - pos);
      let r: number;
      try {
        r = readSync(readerFd(this.segmentPath(segment.start)), target, at + got, want, pos - segment.start);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        this.segments.splice(this.segments.indexOf(segment), 1);
        this.losses++;
        break;
      }
      if (r === 0) {
        // The file is shorter than the table says (cut by a crash): what is missing counts as omitted.
        segment.length = pos - segment.start;
        if (segment.length === 0) this.segments.splice(this.segments.indexOf(segment), 1);
        this.losses++;
        break;
      }
      got += r;
    }
    return got;
  }

  /** spans() with the bytes read; a short read ends the pieces there, and `next` follows the last byte read. */
  read(from: number, limit: number, only?: OutputStream): { pieces: LogPiece[]; from: number; next: number } {
    const { spans, from: start, next } = this.spans(from, limit, only);
    const pieces: LogPiece[] = [];
    const lossesBefore = this.losses;
    for (const span of spans) {
      const data = Buffer.allocUnsafe(span.length);
      const got = this.readInto(data, 0, span.offset, span.length);
      if (got > 0) pieces.push({ stream: span.stream, offset: span.offset, data: got === span.length ? data : data.subarray(0, got) });
      if (got < span.length) {
        // Nothing read because a segment vanished: the table no longer has it, so read on from the next kept byte.
        if (pieces.length === 0 && this.losses > lossesBefore) return this.read(from, limit, only);
        return { pieces, from: start, next: span.offset + got };
      }
    }
    return { pieces, from: start, next };
  }

  /** Closes the cached read descriptors of this log's segments (before its directory is deleted). */
  releaseReaders(): void {
    for (const s of this.segments) forgetReader(this.segmentPath(s.start));
  }

  private findRun(pos: number): number {
    let lo = 0;
    let hi = this.runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.runs[mid]!.start <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private writableSegment(): Segment {
    const last = this.segments.at(-1);
    if (last && this.fd !== undefined && last.length < this.segmentSize) return last;
    if (this.fd !== undefined) closeSync(this.fd);
    const seg = { start: this.end, length: 0 };
    this.ensureDir();
    this.segments.push(seg);
    this.fd = openSync(this.segmentPath(seg.start), "a");
    this.evict();
    return seg;
  }

  /** Drops the oldest tail segments once head + tail pass the cap. */
  private evict(): void {
    let kept = 0;
    for (const s of this.segments) kept += s.length;
    while (kept + this.segmentSize > this.capBytes) {
      const victimIndex = this.segments.findIndex((s) => s.start >= this.headLimit);
      if (victimIndex < 0 || victimIndex === this.segments.length - 1) return;
      const [victim] = this.segments.splice(victimIndex, 1);
      kept -= victim!.length;
      forgetReader(this.segmentPath(victim!.start));
      rmSync(this.segmentPath(victim!.start), { force: true });
      const firstKept = this.segments[victimIndex]!.start;
      // Runs wholly inside the omitted middle are no longer needed in memory.
      this.runs = this.runs.filter((r) => r.start + r.length > firstKept || r.start < this.headLimit);
    }
  }

  private extendRun(stream: OutputStream, offset: number, length: number): void {
    if (this.openRun && this.openRun.stream === stream) this.openRun.length += length;
    else {
      this.closeRun();
      this.openRun = { start: offset, length, stream };
      this.runs.push(this.openRun);
    }
  }

  private closeRun(): void {
    if (!this.openRun) return;
    const rec = Buffer.alloc(RECORD_BYTES);
    rec.writeDoubleLE(this.openRun.start, 0);
    rec.writeDoubleLE(this.openRun.length, 8);
    rec.writeUInt8(STREAM_CODES.indexOf(this.openRun.stream), 16);
    this.ensureDir();
    appendFileSync(join(this.dir, "runs.idx"), rec);
    this.openRun = undefined;
  }

  private ensureDir(): void {
    if (this.dirReady) return;
    this.makeDir(this.dir);
    this.dirReady = true;
  }

  private segmentPath(start: number): string {
    return join(this.dir, segmentName(start));
  }
}

function segmentName(start: number): string {
  return `seg-${String(start).padStart(15, "0")}.log`;
}

function readRuns(path: string): Run[] {
  if (!existsSync(path)) return [];
  const buf = readFileSync(path);
  const runs: Run[] = [];
  for (let i = 0; i + RECORD_BYTES <= buf.length; i += RECORD_BYTES) {
    const start = buf.readDoubleLE(i);
    const length = buf.readDoubleLE(i + 8);
    const stream = STREAM_CODES[buf.readUInt8(i + 16)] ?? "stdout";
    const prev = runs.at(-1);
    if (prev && prev.stream === stream && prev.start + prev.length === start) prev.length += length;
    else runs.push({ start, length, stream });
  }
  return runs;
}

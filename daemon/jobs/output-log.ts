import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { OutputStream } from "../../protocol/common.js";
import { forgetReader } from "./reader-fds.js";
import { indexName, RECORD_BYTES, segmentName } from "./output/files.js";
import { type LogPiece, type LogSpan, type LogTable, readPieces, readSegments, spans, tailStart } from "./output/reader.js";
import { encodeRun, loadRuns, type Run } from "./output/run-index.js";
import { evictTail, headBudgetFor, RUN_COST, type Segment, scanSegments, segmentSizeFor, weight, weightOf } from "./output/segments.js";
import { Stage } from "./output/stage.js";

export type { LogPiece, LogSpan };

/**
 * A job's output as one ordered, byte-addressed log on disk. Bytes live in segment files named by
 * their first offset; the first half of the cap is kept as the head, and the newest segments as the
 * tail, so a runaway job keeps head + tail and the middle is counted in `omittedBytes`. Which stream
 * each byte came from is kept as runs, each segment's in its own index `seg-<start>.idx` (24-byte
 * records: offset f64, length f64, stream u8), so the index is dropped with its bytes. A run never
 * spans segments, and every run after a segment's first costs RUN_COST bytes of its room: the cap
 * bounds bytes and index together, and reading a log's index is bounded by it too.
 *
 * The mechanisms live in ./output/: segments and the cap (segments.ts), the run index
 * (run-index.ts), the write stage and its timer (stage.ts), reads (reader.ts); this class holds the
 * open files and the order in which it calls them.
 */
export class OutputLog {
  private readonly t: LogTable;
  private openRun: Run | undefined;
  private fd: number | undefined;
  private indexFd: number | undefined;
  /** For a log opened from disk: runs are read on first need, so a restart with many jobs reads none. */
  private runsLoaded = true;
  private readonly segmentSize: number;
  /** The head's weight budget; once reached, the head ends where the next segment begins. */
  private readonly headBudget: number;
  private headEnd = Infinity;

  /** The files a fresh log opens first; a directory made ahead of time holds them already. */
  static readonly INITIAL_FILES: readonly string[] = [segmentName(0), indexName(0)];

  private dirReady = false;
  private readonly stage = new Stage(() => this.flushOrReport());
  /** Where a failed write of staged bytes is reported when no append or read is there to throw to. */
  onWriteError: ((err: NodeJS.ErrnoException) => void) | undefined;

  private constructor(
    dir: string,
    private readonly capBytes: number,
    private readonly makeDir: (dir: string) => void = (d) => mkdirSync(d, { recursive: true }),
  ) {
    this.t = { dir, segments: [], runs: [], end: 0, losses: 0 };
    this.segmentSize = segmentSizeFor(capBytes);
    this.headBudget = headBudgetFor(capBytes, this.segmentSize);
  }

  /** A fresh, writable log in `dir`; the directory is made (by `makeDir`) only when the first byte arrives. */
  static create(dir: string, capBytes: number, makeDir?: (dir: string) => void): OutputLog {
    return new OutputLog(dir, capBytes, makeDir);
  }

  /** Opens an existing log read-only (after a restart, or for a finished job); its runs are read on first need. */
  static open(dir: string, capBytes: number): OutputLog {
    const log = new OutputLog(dir, capBytes);
    log.dirReady = true;
    log.runsLoaded = false;
    log.t.segments = scanSegments(dir, log.segmentSize);
    const last = log.t.segments.at(-1);
    log.t.end = last ? last.start + last.length : 0;
    return log;
  }

  /** Total bytes ever written: the offset the next byte will get. */
  get size(): number {
    return this.t.end;
  }

  get omittedBytes(): number {
    return this.t.end - this.keptBytes;
  }

  /**
   * Appends bytes and returns their offset. They are staged and written within STAGE_MS (at once
   * when a read needs them), or with `now` (a live follower is about to see them) written at once,
   * after what is staged; reads see them at once. A write that fails (a full disk: ENOSPC) throws
   * here, or goes to onWriteError when the timer wrote, and the log then holds exactly the bytes the
   * kernel took.
   */
  append(stream: OutputStream, data: Buffer, now = false): number {
    if (now) this.flush();
    const t = this.t;
    const offset = t.end;
    let written = 0;
    while (written < data.length) {
      const seg = this.writableSegment(this.openRun?.stream !== stream);
      let run = this.openRun;
      if (!run || run.stream !== stream) {
        this.closeRun();
        run = this.openRun = { start: t.end, length: 0, stream };
        t.runs.push(run);
        seg.runs++;
      }
      const room = Math.max(1, this.segmentSize - weight(seg));
      const length = Math.min(room, data.length - written);
      const n = now ? writeSync(this.fd!, data, written, length) : this.stageBytes(data, written, length);
      seg.length += n;
      run.length += n;
      written += n;
      t.end += n;
    }
    return offset;
  }

  /** Bytes of this log kept on disk, its index included. */
  get diskBytes(): number {
    let bytes = 0;
    for (const s of this.t.segments) bytes += s.length + s.runs * RECORD_BYTES;
    return bytes;
  }

  /** Output bytes of this log kept on disk. */
  get keptBytes(): number {
    let kept = 0;
    for (const s of this.t.segments) kept += s.length;
    return kept;
  }

  /** Writes the staged bytes now; a failed write throws, and the log keeps what the kernel took. */
  flush(): void {
    this.stage.drain(
      (buffer, offset, length) => writeSync(this.fd!, buffer, offset, length),
      (lost) => this.truncateTo(this.t.end - lost),
    );
  }

  /** Flushes the run index and closes the file; the log stays readable. */
  close(): void {
    try {
      this.closeRun();
    } finally {
      this.closeFiles();
    }
  }

  /** Which bytes a read of up to `limit` bytes from `from` covers (reader.ts's spans). */
  spans(from: number, limit: number, only?: OutputStream): { spans: LogSpan[]; from: number; next: number } {
    this.loadRuns();
    return spans(this.t, from, limit, only);
  }

  /** The offset after which `count` bytes of `only` (or of any stream) remain (reader.ts's tailStart). */
  tailStart(count: number, only?: OutputStream): number {
    this.loadRuns();
    return tailStart(this.t, count, only);
  }

  /**
   * Reads `length` log bytes at `offset` into `target` at `at`; returns how many it read (staged
   * bytes it reaches are written first). A vanished segment reads short and counts as omitted.
   */
  readInto(target: Buffer, at: number, offset: number, length: number): number {
    if (this.stage.reaches(offset + length, this.t.end)) this.flushOrReport();
    return readSegments(this.t, target, at, offset, length);
  }

  /** spans() with the bytes read (reader.ts's readPieces; `scratch` lends the pieces their memory). */
  read(from: number, limit: number, only?: OutputStream, scratch?: Buffer): { pieces: LogPiece[]; from: number; next: number } {
    this.loadRuns();
    return readPieces(this.t, (target, at, offset, length) => this.readInto(target, at, offset, length), from, limit, only, scratch);
  }

  /** Closes the cached read descriptors of this log's segments (before its directory is deleted). */
  releaseReaders(): void {
    for (const s of this.t.segments) forgetReader(this.segmentPath(s.start));
  }

  /** Copies up to `length` bytes into the stage (writing a full stage first); returns how many it took. */
  private stageBytes(data: Buffer, from: number, length: number): number {
    if (this.stage.full) this.flush();
    return this.stage.take(data, from, length);
  }

  private flushOrReport(): void {
    try {
      this.flush();
    } catch (err) {
      this.onWriteError?.(err as NodeJS.ErrnoException);
    }
  }

  /** Forgets the bytes after `newEnd` (staged bytes the kernel did not take): they were all in the last segment. */
  private truncateTo(newEnd: number): void {
    const t = this.t;
    const cut = t.end - newEnd;
    const seg = t.segments.at(-1);
    if (cut <= 0 || !seg) return;
    seg.length -= cut;
    t.end = newEnd;
    for (let run = t.runs.at(-1); run && run.start + run.length > newEnd; run = t.runs.at(-1)) {
      if (run.start < newEnd) {
        run.length = newEnd - run.start;
        break;
      }
      t.runs.pop();
      seg.runs--;
      if (this.openRun === run) this.openRun = undefined;
    }
  }

  private closeFiles(): void {
    try {
      this.flush(); // the staged bytes belong to this file
    } finally {
      if (this.fd !== undefined) closeSync(this.fd);
      if (this.indexFd !== undefined) closeSync(this.indexFd);
      this.fd = this.indexFd = undefined;
    }
  }

  /** The segment to write to; `newRun`: the write starts a run, so it needs room for one more. */
  private writableSegment(newRun: boolean): Segment {
    const t = this.t;
    const last = t.segments.at(-1);
    const needed = newRun && last && last.runs > 0 ? RUN_COST : 0;
    if (last && this.fd !== undefined && weight(last) + needed < this.segmentSize) return last;
    // Runs never span segments: each segment's index describes its own bytes.
    this.closeRun();
    this.closeFiles();
    if (this.headEnd === Infinity && weightOf(t.segments) >= this.headBudget) this.headEnd = t.end;
    const seg = { start: t.end, length: 0, runs: 0 };
    this.ensureDir();
    t.segments.push(seg);
    this.fd = openSync(this.segmentPath(seg.start), "a");
    this.indexFd = openSync(join(t.dir, indexName(seg.start)), "a");
    const firstKept = evictTail(t.dir, t.segments, this.headEnd, this.capBytes, this.segmentSize);
    // Runs wholly inside the omitted middle are no longer needed in memory.
    if (firstKept !== undefined) t.runs = t.runs.filter((r) => r.start + r.length > firstKept || r.start < this.headEnd);
    return seg;
  }

  private closeRun(): void {
    const run = this.openRun;
    if (!run) return;
    this.openRun = undefined;
    if (run.length === 0) {
      // A run whose first write failed: it holds nothing.
      this.t.runs.pop();
      const seg = this.t.segments.at(-1);
      if (seg) seg.runs--;
      return;
    }
    writeSync(this.indexFd!, encodeRun(run));
  }

  /** Reads the runs of an opened log on first need (run-index.ts's loadRuns). */
  private loadRuns(): void {
    if (this.runsLoaded) return;
    this.runsLoaded = true;
    this.t.runs = loadRuns(this.t.dir, this.t.segments, this.segmentSize);
  }

  private ensureDir(): void {
    if (this.dirReady) return;
    this.makeDir(this.t.dir);
    this.dirReady = true;
  }

  private segmentPath(start: number): string {
    return join(this.t.dir, segmentName(start));
  }
}

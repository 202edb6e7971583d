import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { forgetReader, readerFd } from "./reader-fds.js";
import type { OutputStream } from "../../protocol/common.js";
import { BufferPool } from "../util/buffer-pool.js";

/** A run of consecutive bytes of one stream in the log. */
interface Run {
  start: number;
  length: number;
  stream: OutputStream;
}

interface Segment {
  start: number;
  length: number;
  /** Records in its index (`seg-<start>.idx`), the open run included. */
  runs: number;
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
 * What a run costs against the cap beyond a segment's first: about its size in memory (a Run
 * object), so a job that switches streams every byte holds at most about its cap in memory as
 * well as on disk, where a record is 24 bytes.
 */
const RUN_COST = 64;
/** Before per-segment indexes, one index covered the whole log. */
const LEGACY_INDEX = "runs.idx";
/**
 * Appended bytes are staged and written to their segment in pieces of up to this size. Pipes hand
 * over 4–64 KiB at a time, and the page cache keeps a file in folios as large as the writes that
 * made it: a log written in 16 KiB pieces is copied out at ~14 GB/s, one written in 1 MiB pieces at
 * ~26 GB/s, and copying out is what a follower reading a finished job spends most of its time on.
 */
const STAGE_BYTES = 1024 * 1024;
/** Staged bytes wait at most this long for their write: all a crash of the daemon can cost. */
const STAGE_MS = 5;
/** Stages of 16 jobs printing at once come from the pool; more get a small one each (see stageBytes). */
const stagePool = new BufferPool(STAGE_BYTES, 16);
/** The stage of a job beyond the pool's 16: a fresh 1 MiB every 5 ms for a job printing a line at a time would be garbage. */
const SMALL_STAGE_BYTES = 64 * 1024;

/**
 * A job's output as one ordered, byte-addressed log on disk. Bytes live in segment files named by
 * their first offset; the first half of the cap is kept as the head, and the newest segments as the
 * tail, so a runaway job keeps head + tail and the middle is counted in `omittedBytes`. Which stream
 * each byte came from is kept as runs, each segment's in its own index `seg-<start>.idx` (24-byte
 * records: offset f64, length f64, stream u8), so the index is dropped with its bytes. A run never
 * spans segments, and every run after a segment's first costs RUN_COST bytes of its room: the cap
 * bounds bytes and index together, and reading a log's index is bounded by it too.
 */
export class OutputLog {
  private readonly segments: Segment[] = [];
  private runs: Run[] = [];
  private openRun: Run | undefined;
  private fd: number | undefined;
  private indexFd: number | undefined;
  /** For a log opened from disk: runs are read on first need, so a restart with many jobs reads none. */
  private runsLoaded = true;
  private end = 0;
  private readonly segmentSize: number;
  /** The head's weight budget; once reached, the head ends where the next segment begins. */
  private readonly headBudget: number;
  private headEnd = Infinity;

  /** The files a fresh log opens first; a directory made ahead of time holds them already. */
  static readonly INITIAL_FILES: readonly string[] = [segmentName(0), indexName(0)];

  private dirReady = false;
  /** Counts segments found missing or short on read; a read that lost one retries on the new table. */
  private losses = 0;
  /** The last `staged` bytes of the log (all in the last segment), not written yet; see STAGE_BYTES. */
  private stage: Buffer | undefined;
  private staged = 0;
  private stageTimer: NodeJS.Timeout | undefined;
  /** Where a failed write of staged bytes is reported when no append or read is there to throw to. */
  onWriteError: ((err: NodeJS.ErrnoException) => void) | undefined;

  private constructor(
    private readonly dir: string,
    private readonly capBytes: number,
    private readonly makeDir: (dir: string) => void = (d) => mkdirSync(d, { recursive: true }),
  ) {
    this.segmentSize = Math.max(4096, Math.min(8 * 1024 * 1024, Math.floor(capBytes / 8)));
    this.headBudget = Math.max(this.segmentSize, Math.floor(capBytes / 2));
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
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      return log;
    }
    const indexed = new Set(names.filter((n) => /^seg-\d+\.idx$/.test(n)));
    for (const name of names) {
      const m = /^seg-(\d+)\.log$/.exec(name);
      if (!m) continue;
      const start = Number(m[1]);
      const index = indexName(start);
      const length = fileSize(join(dir, name));
      const records = indexed.has(index) ? Math.floor(fileSize(join(dir, index)) / RECORD_BYTES) : 0;
      log.segments.push({ start, length, runs: Math.min(records, maxRuns(length, log.segmentSize)) });
    }
    log.segments.sort((a, b) => a.start - b.start);
    const last = log.segments.at(-1);
    log.end = last ? last.start + last.length : 0;
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
   * Appends bytes and returns their offset. They are staged and written within STAGE_MS (at once
   * when a read needs them), or with `now` (a live follower is about to see them) written at once,
   * after what is staged; reads see them at once. A write that fails (a full disk: ENOSPC) throws
   * here, or goes to onWriteError when the timer wrote, and the log then holds exactly the bytes the
   * kernel took.
   */
  append(stream: OutputStream, data: Buffer, now = false): number {
    if (now) this.flush();
    const offset = this.end;
    let written = 0;
    while (written < data.length) {
      const seg = this.writableSegment(this.openRun?.stream !== stream);
      let run = this.openRun;
      if (!run || run.stream !== stream) {
        this.closeRun();
        run = this.openRun = { start: this.end, length: 0, stream };
        this.runs.push(run);
        seg.runs++;
      }
      const room = Math.max(1, this.segmentSize - weight(seg));
      const length = Math.min(room, data.length - written);
      const n = now ? writeSync(this.fd!, data, written, length) : this.stageBytes(data, written, length);
      seg.length += n;
      run.length += n;
      written += n;
      this.end += n;
    }
    return offset;
  }

  /** Bytes of this log kept on disk, its index included. */
  get diskBytes(): number {
    let bytes = 0;
    for (const s of this.segments) bytes += s.length + s.runs * RECORD_BYTES;
    return bytes;
  }

  /** Output bytes of this log kept on disk. */
  get keptBytes(): number {
    let kept = 0;
    for (const s of this.segments) kept += s.length;
    return kept;
  }

  /** Writes the staged bytes now; a failed write throws, and the log keeps what the kernel took. */
  flush(): void {
    if (this.stageTimer) clearTimeout(this.stageTimer);
    this.stageTimer = undefined;
    const stage = this.stage;
    const total = this.staged;
    if (!stage || total === 0) return;
    let done = 0;
    try {
      while (done < total) done += writeSync(this.fd!, stage, done, total - done);
    } catch (err) {
      this.truncateTo(this.end - total + done);
      throw err;
    } finally {
      this.stage = undefined;
      this.staged = 0;
      stagePool.give(stage);
    }
  }

  /** Flushes the run index and closes the file; the log stays readable. */
  close(): void {
    try {
      this.closeRun();
    } finally {
      this.closeFiles();
    }
  }

  /** Copies up to `length` bytes into the stage (writing a full stage first); returns how many it took. */
  private stageBytes(data: Buffer, from: number, length: number): number {
    if (this.stage && this.staged === this.stage.length) this.flush();
    this.stage ??= stagePool.take() ?? Buffer.allocUnsafe(SMALL_STAGE_BYTES);
    const n = data.copy(this.stage, this.staged, from, from + Math.min(length, this.stage.length - this.staged));
    this.staged += n;
    this.stageTimer ??= setTimeout(() => this.flushOrReport(), STAGE_MS).unref();
    return n;
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
    const cut = this.end - newEnd;
    const seg = this.segments.at(-1);
    if (cut <= 0 || !seg) return;
    seg.length -= cut;
    this.end = newEnd;
    for (let run = this.runs.at(-1); run && run.start + run.length > newEnd; run = this.runs.at(-1)) {
      if (run.start < newEnd) {
        run.length = newEnd - run.start;
        break;
      }
      this.runs.pop();
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

  /**
   * Which bytes a read of up to `limit` bytes from `from` covers, as stretches of one stream each.
   * A `from` inside the omitted middle moves to the first kept byte; `next` is where the following
   * read should start. Bytes of other streams than `only` are skipped but still advance `next`.
   */
  spans(from: number, limit: number, only?: OutputStream): { spans: LogSpan[]; from: number; next: number } {
    this.loadRuns();
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
    this.loadRuns();
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
    if (this.staged > 0 && offset + length > this.end - this.staged) this.flushOrReport();
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

  /**
   * spans() with the bytes read; a short read ends the pieces there, and `next` follows the last byte
   * read. With `scratch` (at least `limit` bytes) the pieces are views of it, valid until its next use:
   * a reader that copies them at once spares an allocation per read.
   */
  read(from: number, limit: number, only?: OutputStream, scratch?: Buffer): { pieces: LogPiece[]; from: number; next: number } {
    const { spans, from: start, next } = this.spans(from, limit, only);
    const pieces: LogPiece[] = [];
    const lossesBefore = this.losses;
    let used = 0;
    for (const span of spans) {
      const data =
        scratch && scratch.length - used >= span.length ? scratch.subarray(used, (used += span.length)) : Buffer.allocUnsafe(span.length);
      const got = this.readInto(data, 0, span.offset, span.length);
      if (got > 0) pieces.push({ stream: span.stream, offset: span.offset, data: got === span.length ? data : data.subarray(0, got) });
      if (got < span.length) {
        // Nothing read because a segment vanished: the table no longer has it, so read on from the next kept byte.
        if (pieces.length === 0 && this.losses > lossesBefore) return this.read(from, limit, only, scratch);
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

  /** The segment to write to; `newRun`: the write starts a run, so it needs room for one more. */
  private writableSegment(newRun: boolean): Segment {
    const last = this.segments.at(-1);
    const needed = newRun && last && last.runs > 0 ? RUN_COST : 0;
    if (last && this.fd !== undefined && weight(last) + needed < this.segmentSize) return last;
    // Runs never span segments: each segment's index describes its own bytes.
    this.closeRun();
    this.closeFiles();
    if (this.headEnd === Infinity && this.weightOf(this.segments) >= this.headBudget) this.headEnd = this.end;
    const seg = { start: this.end, length: 0, runs: 0 };
    this.ensureDir();
    this.segments.push(seg);
    this.fd = openSync(this.segmentPath(seg.start), "a");
    this.indexFd = openSync(join(this.dir, indexName(seg.start)), "a");
    this.evict();
    return seg;
  }

  private weightOf(segments: readonly Segment[]): number {
    let total = 0;
    for (const s of segments) total += weight(s);
    return total;
  }

  /** Drops the oldest tail segments (bytes and index) once head + tail pass the cap. */
  private evict(): void {
    let kept = this.weightOf(this.segments);
    while (kept + this.segmentSize > this.capBytes) {
      const victimIndex = this.segments.findIndex((s) => s.start >= this.headEnd);
      if (victimIndex < 0 || victimIndex === this.segments.length - 1) return;
      const [victim] = this.segments.splice(victimIndex, 1);
      kept -= weight(victim!);
      forgetReader(this.segmentPath(victim!.start));
      rmSync(this.segmentPath(victim!.start), { force: true });
      rmSync(join(this.dir, indexName(victim!.start)), { force: true });
      const firstKept = this.segments[victimIndex]!.start;
      // Runs wholly inside the omitted middle are no longer needed in memory.
      this.runs = this.runs.filter((r) => r.start + r.length > firstKept || r.start < this.headEnd);
    }
  }

  private closeRun(): void {
    const run = this.openRun;
    if (!run) return;
    this.openRun = undefined;
    if (run.length === 0) {
      // A run whose first write failed: it holds nothing.
      this.runs.pop();
      const seg = this.segments.at(-1);
      if (seg) seg.runs--;
      return;
    }
    const rec = Buffer.alloc(RECORD_BYTES);
    rec.writeDoubleLE(run.start, 0);
    rec.writeDoubleLE(run.length, 8);
    rec.writeUInt8(STREAM_CODES.indexOf(run.stream), 16);
    writeSync(this.indexFd!, rec);
  }

  /** Reads the runs of an opened log: each segment's index, bounded by what the segment can hold. */
  private loadRuns(): void {
    if (this.runsLoaded) return;
    this.runsLoaded = true;
    const runs: Run[] = [];
    const legacy = this.segments.every((s) => s.runs === 0)
      ? readLegacyRuns(join(this.dir, LEGACY_INDEX), this.segments, this.segmentSize)
      : undefined;
    for (const seg of this.segments) {
      const records = legacy
        ? legacy.filter((r) => r.start < seg.start + seg.length && r.start + r.length > seg.start)
        : readIndex(join(this.dir, indexName(seg.start)), maxRuns(seg.length, this.segmentSize));
      let covered = seg.start;
      for (const r of records) {
        const start = Math.max(r.start, covered);
        const end = Math.min(r.start + r.length, seg.start + seg.length);
        if (end <= start) continue;
        // A gap (a record lost in a crash) goes to the stream before it.
        if (start > covered) pushRun(runs, covered, start - covered, runs.at(-1)?.stream ?? "stdout");
        pushRun(runs, start, end - start, r.stream);
        covered = end;
      }
      // A daemon that died mid-run had not written its last record; the rest goes to the last stream.
      if (covered < seg.start + seg.length) pushRun(runs, covered, seg.start + seg.length - covered, runs.at(-1)?.stream ?? "stdout");
    }
    this.runs = runs;
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

function indexName(start: number): string {
  return `seg-${String(start).padStart(15, "0")}.idx`;
}

/** How much of a segment's bytes and runs count against its room. */
function weight(seg: Segment): number {
  return seg.length + RUN_COST * Math.max(0, seg.runs - 1);
}

/** The most records a segment can have: a run holds at least a byte and costs RUN_COST of its room. */
function maxRuns(segmentLength: number, segmentSize: number): number {
  return Math.min(segmentLength, Math.ceil(Math.max(segmentLength, segmentSize) / RUN_COST)) + 2;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Appends a run, merged into the previous one when it continues the same stream. */
function pushRun(runs: Run[], start: number, length: number, stream: OutputStream): void {
  const prev = runs.at(-1);
  if (prev && prev.stream === stream && prev.start + prev.length === start) prev.length += length;
  else runs.push({ start, length, stream });
}

/** Up to `limit` records of an index file, in order, coalesced; unreadable or absent: none. */
function readIndex(path: string, limit: number): Run[] {
  const runs: Run[] = [];
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return runs;
  }
  try {
    const chunk = Buffer.allocUnsafe(RECORD_BYTES * 4096);
    let position = 0;
    let records = 0;
    while (records < limit) {
      const want = Math.min(chunk.length, (limit - records) * RECORD_BYTES);
      const got = readSync(fd, chunk, 0, want, position);
      if (got < RECORD_BYTES) break;
      for (let i = 0; i + RECORD_BYTES <= got; i += RECORD_BYTES) {
        records++; // a record that is no record (zeros, garbage) counts too: the read stays bounded
        const start = chunk.readDoubleLE(i);
        const length = chunk.readDoubleLE(i + 8);
        if (!Number.isSafeInteger(start) || !Number.isSafeInteger(length) || start < 0 || length <= 0) continue;
        pushRun(runs, start, length, STREAM_CODES[chunk.readUInt8(i + 16)] ?? "stdout");
      }
      position += got - (got % RECORD_BYTES);
    }
  } finally {
    closeSync(fd);
  }
  return runs;
}

/**
 * The whole-log index of logs written before per-segment indexes. Read only when it is no bigger
 * than the kept segments' own indexes could be; otherwise (a runaway index) its bytes count as stdout.
 */
function readLegacyRuns(path: string, segments: readonly Segment[], segmentSize: number): Run[] {
  let limit = 0;
  for (const seg of segments) limit += maxRuns(seg.length, segmentSize);
  if (fileSize(path) > limit * RECORD_BYTES) return [];
  return readIndex(path, limit);
}

import { readSync } from "node:fs";
import { join } from "node:path";
import type { OutputStream } from "../../../protocol/common.js";
import { readerFd } from "../reader-fds.js";
import { segmentName } from "./files.js";
import { findRun, type Run } from "./run-index.js";
import type { Segment } from "./segments.js";

/** What a read looks at: a log's kept segments and its runs (loaded), in order. */
export interface LogTable {
  readonly dir: string;
  segments: Segment[];
  runs: Run[];
  /** Total bytes ever written: the offset the next byte will get. */
  end: number;
  /** Counts segments found missing or short on read; a read that lost one retries on the new table. */
  losses: number;
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

/** Reads `length` bytes of the log at `offset` into `target` at `at` (the log's own readInto, which writes staged bytes first). */
export type Fill = (target: Buffer, at: number, offset: number, length: number) => number;

/**
 * Which bytes a read of up to `limit` bytes from `from` covers, as stretches of one stream each.
 * A `from` inside the omitted middle moves to the first kept byte; `next` is where the following
 * read should start. Bytes of other streams than `only` are skipped but still advance `next`.
 */
export function spans(t: LogTable, from: number, limit: number, only?: OutputStream): { spans: LogSpan[]; from: number; next: number } {
  let pos = Math.min(from, t.end);
  const firstKept = t.segments.find((s) => s.start + s.length > pos);
  if (firstKept && firstKept.start > pos) pos = firstKept.start;
  const start = pos;
  const out: LogSpan[] = [];
  let budget = limit;
  let runIndex = findRun(t.runs, pos);
  while (budget > 0 && pos < t.end && runIndex < t.runs.length) {
    const run = t.runs[runIndex]!;
    const runEnd = run.start + run.length;
    if (pos >= runEnd) {
      runIndex++;
      continue;
    }
    const segment = t.segments.find((s) => s.start <= pos && pos < s.start + s.length);
    if (!segment) break; // evicted while reading: the caller retries from `next`
    const n = Math.min(budget, runEnd - pos, segment.start + segment.length - pos);
    if (only === undefined || run.stream === only) {
      const prev = out.at(-1);
      if (prev && prev.stream === run.stream && prev.offset + prev.length === pos) prev.length += n;
      else out.push({ stream: run.stream, offset: pos, length: n });
      budget -= n;
    }
    pos += n;
  }
  return { spans: out, from: start, next: pos };
}

/**
 * The offset after which `count` bytes of `only` (or of any stream) remain to the end of the
 * log; fewer when the log holds fewer. It never reaches back across the omitted middle: then it
 * is the first kept byte after it.
 */
export function tailStart(t: LogTable, count: number, only?: OutputStream): number {
  let need = count;
  let pos = t.end;
  let segIndex = t.segments.length - 1;
  let runIndex = t.runs.length > 0 ? findRun(t.runs, Math.max(0, pos - 1)) : -1;
  while (need > 0 && segIndex >= 0 && runIndex >= 0) {
    const segment = t.segments[segIndex]!;
    if (pos <= segment.start) {
      const previous = t.segments[segIndex - 1];
      if (!previous || previous.start + previous.length < segment.start) break; // the omitted middle
      segIndex--;
      continue;
    }
    const run = t.runs[runIndex]!;
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
 * Reads `length` log bytes at `offset` from the segment files into `target` at `at`; returns how
 * many it read. A segment whose file has vanished (its job deleted under a reader) reads short and
 * is dropped from the table, so it counts as omitted from then on; it never throws for that.
 */
export function readSegments(t: LogTable, target: Buffer, at: number, offset: number, length: number): number {
  let got = 0;
  while (got < length) {
    const pos = offset + got;
    const segment = t.segments.find((s) => s.start <= pos && pos < s.start + s.length);
    if (!segment) break;
    const want = Math.min(length - got, segment.start + segment.length - pos);
    let r: number;
    try {
      r = readSync(readerFd(join(t.dir, segmentName(segment.start))), target, at + got, want, pos - segment.start);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      t.segments.splice(t.segments.indexOf(segment), 1);
      t.losses++;
      break;
    }
    if (r === 0) {
      // The file is shorter than the table says (cut by a crash): what is missing counts as omitted.
      segment.length = pos - segment.start;
      if (segment.length === 0) t.segments.splice(t.segments.indexOf(segment), 1);
      t.losses++;
      break;
    }
    got += r;
  }
  return got;
}

/**
 * spans() with the bytes read by `fill`; a short read ends the pieces there, and `next` follows the
 * last byte read. With `scratch` (at least `limit` bytes) the pieces are views of it, valid until
 * its next use: a reader that copies them at once spares an allocation per read.
 */
export function readPieces(
  t: LogTable,
  fill: Fill,
  from: number,
  limit: number,
  only?: OutputStream,
  scratch?: Buffer,
): { pieces: LogPiece[]; from: number; next: number } {
  const { spans: stretches, from: start, next } = spans(t, from, limit, only);
  const pieces: LogPiece[] = [];
  const lossesBefore = t.losses;
  let used = 0;
  for (const span of stretches) {
    const data =
      scratch && scratch.length - used >= span.length ? scratch.subarray(used, (used += span.length)) : Buffer.allocUnsafe(span.length);
    const got = fill(data, 0, span.offset, span.length);
    if (got > 0) pieces.push({ stream: span.stream, offset: span.offset, data: got === span.length ? data : data.subarray(0, got) });
    if (got < span.length) {
      // Nothing read because a segment vanished: the table no longer has it, so read on from the next kept byte.
      if (pieces.length === 0 && t.losses > lossesBefore) return readPieces(t, fill, from, limit, only, scratch);
      return { pieces, from: start, next: span.offset + got };
    }
  }
  return { pieces, from: start, next };
}

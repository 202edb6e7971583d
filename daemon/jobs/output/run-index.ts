import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import type { OutputStream } from "../../../protocol/common.js";
import { fileSize, indexName, RECORD_BYTES } from "./files.js";
import { maxRuns, type Segment } from "./segments.js";

/** A run of consecutive bytes of one stream in the log. */
export interface Run {
  start: number;
  length: number;
  stream: OutputStream;
}

const STREAM_CODES: readonly OutputStream[] = ["stdout", "stderr", "pty"];
/** Before per-segment indexes, one index covered the whole log. */
const LEGACY_INDEX = "runs.idx";

/** The index record of a closed run. */
export function encodeRun(run: Run): Buffer {
  const rec = Buffer.alloc(RECORD_BYTES);
  rec.writeDoubleLE(run.start, 0);
  rec.writeDoubleLE(run.length, 8);
  rec.writeUInt8(STREAM_CODES.indexOf(run.stream), 16);
  return rec;
}

/** The index of the last run starting at or before `pos` (0 when none does); runs are in order. */
export function findRun(runs: readonly Run[], pos: number): number {
  let lo = 0;
  let hi = runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (runs[mid]!.start <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Appends a run, merged into the previous one when it continues the same stream. */
export function pushRun(runs: Run[], start: number, length: number, stream: OutputStream): void {
  const prev = runs.at(-1);
  if (prev && prev.stream === stream && prev.start + prev.length === start) prev.length += length;
  else runs.push({ start, length, stream });
}

/**
 * The runs of a log opened from disk: each segment's index, bounded by what the segment can hold,
 * covering every kept byte (a gap, a record lost in a crash, goes to the stream before it).
 */
export function loadRuns(dir: string, segments: readonly Segment[], segmentSize: number): Run[] {
  const runs: Run[] = [];
  const legacy = segments.every((s) => s.runs === 0) ? readLegacyRuns(join(dir, LEGACY_INDEX), segments, segmentSize) : undefined;
  for (const seg of segments) {
    const records = legacy
      ? legacy.filter((r) => r.start < seg.start + seg.length && r.start + r.length > seg.start)
      : readIndex(join(dir, indexName(seg.start)), maxRuns(seg.length, segmentSize));
    let covered = seg.start;
    for (const r of records) {
      const start = Math.max(r.start, covered);
      const end = Math.min(r.start + r.length, seg.start + seg.length);
      if (end <= start) continue;
      if (start > covered) pushRun(runs, covered, start - covered, runs.at(-1)?.stream ?? "stdout");
      pushRun(runs, start, end - start, r.stream);
      covered = end;
    }
    // A daemon that died mid-run had not written its last record; the rest goes to the last stream.
    if (covered < seg.start + seg.length) pushRun(runs, covered, seg.start + seg.length - covered, runs.at(-1)?.stream ?? "stdout");
  }
  return runs;
}

/** Up to `limit` records of an index file, in order, coalesced; unreadable or absent: none. */
export function readIndex(path: string, limit: number): Run[] {
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

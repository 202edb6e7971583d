import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { forgetReader } from "../reader-fds.js";
import { fileSize, indexName, RECORD_BYTES, segmentName } from "./files.js";

/** One segment file of a log: its bytes are the log's from `start`, `length` long. */
export interface Segment {
  start: number;
  length: number;
  /** Records in its index (`seg-<start>.idx`), the open run included. */
  runs: number;
}

/**
 * What a run costs against the cap beyond a segment's first: about its size in memory (a Run
 * object), so a job that switches streams every byte holds at most about its cap in memory as
 * well as on disk, where a record is 24 bytes.
 */
export const RUN_COST = 64;

/** A log's segment size for its cap: an eighth of it, between 4 KiB and 8 MiB. */
export function segmentSizeFor(capBytes: number): number {
  return Math.max(4096, Math.min(8 * 1024 * 1024, Math.floor(capBytes / 8)));
}

/** The head's weight budget: half the cap, at least a segment; once reached, the head ends where the next segment begins. */
export function headBudgetFor(capBytes: number, segmentSize: number): number {
  return Math.max(segmentSize, Math.floor(capBytes / 2));
}

/** How much of a segment's bytes and runs count against its room. */
export function weight(seg: Segment): number {
  return seg.length + RUN_COST * Math.max(0, seg.runs - 1);
}

export function weightOf(segments: readonly Segment[]): number {
  let total = 0;
  for (const s of segments) total += weight(s);
  return total;
}

/** The most records a segment can have: a run holds at least a byte and costs RUN_COST of its room. */
export function maxRuns(segmentLength: number, segmentSize: number): number {
  return Math.min(segmentLength, Math.ceil(Math.max(segmentLength, segmentSize) / RUN_COST)) + 2;
}

/** The segments of a log directory, in order, each with as many runs as its index and its size allow; none when unreadable. */
export function scanSegments(dir: string, segmentSize: number): Segment[] {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const segments: Segment[] = [];
  const indexed = new Set(names.filter((n) => /^seg-\d+\.idx$/.test(n)));
  for (const name of names) {
    const m = /^seg-(\d+)\.log$/.exec(name);
    if (!m) continue;
    const start = Number(m[1]);
    const index = indexName(start);
    const length = fileSize(join(dir, name));
    const records = indexed.has(index) ? Math.floor(fileSize(join(dir, index)) / RECORD_BYTES) : 0;
    segments.push({ start, length, runs: Math.min(records, maxRuns(length, segmentSize)) });
  }
  return segments.sort((a, b) => a.start - b.start);
}

/**
 * Drops the oldest tail segments (bytes and index files) of `segments` once head + tail pass the
 * cap; the newest segment always stays. Returns the first kept offset after the omitted middle when
 * it dropped any (runs wholly before it, past the head, are no longer needed), else undefined.
 */
export function evictTail(dir: string, segments: Segment[], headEnd: number, capBytes: number, segmentSize: number): number | undefined {
  let kept = weightOf(segments);
  let firstKept: number | undefined;
  while (kept + segmentSize > capBytes) {
    const victimIndex = segments.findIndex((s) => s.start >= headEnd);
    if (victimIndex < 0 || victimIndex === segments.length - 1) break;
    const [victim] = segments.splice(victimIndex, 1);
    kept -= weight(victim!);
    const path = join(dir, segmentName(victim!.start));
    forgetReader(path);
    rmSync(path, { force: true });
    rmSync(join(dir, indexName(victim!.start)), { force: true });
    firstKept = segments[victimIndex]!.start;
  }
  return firstKept;
}

import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexName, segmentName } from "./files.js";
import { evictTail, maxRuns, RUN_COST, type Segment, scanSegments, weight } from "./segments.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A log directory holding a segment (and an index of `runs` records) per entry. */
function logDir(segments: Segment[]): string {
  const dir = mkdtempSync(join(tmpdir(), "hotline-seg-"));
  dirs.push(dir);
  for (const s of segments) {
    writeFileSync(join(dir, segmentName(s.start)), Buffer.alloc(s.length));
    writeFileSync(join(dir, indexName(s.start)), Buffer.alloc(24 * s.runs));
  }
  return dir;
}

describe("segments", () => {
  it("a run after a segment's first costs RUN_COST of its room", () => {
    expect(weight({ start: 0, length: 100, runs: 1 })).toBe(100);
    expect(weight({ start: 0, length: 100, runs: 3 })).toBe(100 + 2 * RUN_COST);
  });

  it("reads a directory's segments in order, trusting no index for more runs than the segment can hold", () => {
    const dir = logDir([
      { start: 4096, length: 10, runs: 50 },
      { start: 0, length: 4096, runs: 2 },
    ]);
    expect(scanSegments(dir, 4096)).toEqual([
      { start: 0, length: 4096, runs: 2 },
      { start: 4096, length: 10, runs: maxRuns(10, 4096) },
    ]);
    expect(scanSegments(join(dir, "absent"), 4096)).toEqual([]);
  });

  it("drops the oldest tail segments with their files once head + tail pass the cap, never the head or the newest", () => {
    const all = [0, 1, 2, 3, 4].map((i) => ({ start: i * 4096, length: 4096, runs: 1 }));
    const dir = logDir(all);
    const segments = all.map((s) => ({ ...s }));
    // Cap 16 KiB, the head ends at 4096: room for three kept segments beside the one being written.
    expect(evictTail(dir, segments, 4096, 16384, 4096)).toBe(3 * 4096);
    expect(segments.map((s) => s.start)).toEqual([0, 3 * 4096, 4 * 4096]);
    expect(existsSync(join(dir, segmentName(4096)))).toBe(false);
    expect(existsSync(join(dir, indexName(2 * 4096)))).toBe(false);
    expect(existsSync(join(dir, segmentName(0)))).toBe(true);
    expect(evictTail(dir, segments, 4096, 1 << 20, 4096)).toBeUndefined();
  });
});

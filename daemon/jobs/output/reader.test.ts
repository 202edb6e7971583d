import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forgetReader } from "../reader-fds.js";
import { segmentName } from "./files.js";
import { type LogTable, readPieces, readSegments, spans, tailStart } from "./reader.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A log of "head" (stdout) at 0, then the middle omitted, then "TAIL" (stdout) + "err" (stderr) at 100. */
function table(): LogTable {
  const dir = mkdtempSync(join(tmpdir(), "hotline-read-"));
  dirs.push(dir);
  writeFileSync(join(dir, segmentName(0)), "head");
  writeFileSync(join(dir, segmentName(100)), "TAILerr");
  return {
    dir,
    segments: [
      { start: 0, length: 4, runs: 1 },
      { start: 100, length: 7, runs: 2 },
    ],
    runs: [
      { start: 0, length: 4, stream: "stdout" },
      { start: 100, length: 4, stream: "stdout" },
      { start: 104, length: 3, stream: "stderr" },
    ],
    end: 107,
    losses: 0,
  };
}

describe("reader", () => {
  it("a read from the omitted middle starts at the first kept byte; other streams advance `next`", () => {
    const t = table();
    expect(spans(t, 50, 100)).toEqual({
      spans: [
        { stream: "stdout", offset: 100, length: 4 },
        { stream: "stderr", offset: 104, length: 3 },
      ],
      from: 100,
      next: 107,
    });
    // A read stops at the omitted middle; the next one, from `next`, moves past it.
    expect(spans(t, 0, 100, "stderr")).toEqual({ spans: [], from: 0, next: 4 });
    expect(spans(t, 4, 100, "stderr")).toEqual({ spans: [{ stream: "stderr", offset: 104, length: 3 }], from: 100, next: 107 });
  });

  it("the tail of one stream never reaches back across the omitted middle", () => {
    const t = table();
    expect(tailStart(t, 2)).toBe(105);
    expect(tailStart(t, 5, "stdout")).toBe(100);
    expect(tailStart(t, 1000)).toBe(100);
  });

  it("reads the pieces with their streams; a vanished segment is dropped and the read goes on past it", () => {
    const t = table();
    const fill = (b: Buffer, at: number, o: number, l: number) => readSegments(t, b, at, o, l);
    const text = (r: ReturnType<typeof readPieces>) => r.pieces.map((p) => `${p.stream}:${p.data}`);
    expect(text(readPieces(t, fill, 0, 100))).toEqual(["stdout:head"]);
    forgetReader(join(t.dir, segmentName(0)));
    rmSync(join(t.dir, segmentName(0)));
    const after = readPieces(t, fill, 0, 100);
    expect(text(after)).toEqual(["stdout:TAIL", "stderr:err"]);
    expect(t.losses).toBe(1);
    expect(t.segments.map((s) => s.start)).toEqual([100]);
    forgetReader(join(t.dir, segmentName(100)));
  });
});

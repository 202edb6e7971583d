import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexName } from "./files.js";
import { encodeRun, findRun, loadRuns, readIndex, type Run } from "./run-index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hotline-idx-"));
  dirs.push(dir);
  return dir;
}

describe("run index", () => {
  it("reads back the records it encodes, coalescing a stream that continues, and at most `limit` records", () => {
    const dir = tempDir();
    const runs: Run[] = [
      { start: 0, length: 5, stream: "stdout" },
      { start: 5, length: 3, stream: "stdout" },
      { start: 8, length: 2, stream: "stderr" },
      { start: 10, length: 1, stream: "pty" },
    ];
    writeFileSync(join(dir, "i"), Buffer.concat(runs.map(encodeRun)));
    expect(readIndex(join(dir, "i"), 10)).toEqual([
      { start: 0, length: 8, stream: "stdout" },
      { start: 8, length: 2, stream: "stderr" },
      { start: 10, length: 1, stream: "pty" },
    ]);
    expect(readIndex(join(dir, "i"), 1)).toEqual([{ start: 0, length: 5, stream: "stdout" }]);
    expect(readIndex(join(dir, "absent"), 10)).toEqual([]);
  });

  it("covers every byte of a segment whose index lost records: gaps go to the stream before them", () => {
    const dir = tempDir();
    const records = [encodeRun({ start: 0, length: 4, stream: "stderr" }), encodeRun({ start: 6, length: 2, stream: "stdout" })];
    writeFileSync(join(dir, indexName(0)), Buffer.concat(records));
    expect(loadRuns(dir, [{ start: 0, length: 12, runs: 2 }], 4096)).toEqual([
      { start: 0, length: 6, stream: "stderr" },
      { start: 6, length: 6, stream: "stdout" },
    ]);
  });

  it("finds the run holding an offset", () => {
    const runs: Run[] = [
      { start: 0, length: 5, stream: "stdout" },
      { start: 5, length: 5, stream: "stderr" },
      { start: 10, length: 5, stream: "stdout" },
    ];
    expect([0, 4, 5, 9, 10, 99].map((pos) => findRun(runs, pos))).toEqual([0, 0, 1, 1, 2, 2]);
  });
});

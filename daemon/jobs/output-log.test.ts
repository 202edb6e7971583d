import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OutputLog } from "./output-log.js";
import type { OutputStream } from "../../protocol/common.js";

const CAP = 32768; // 4 KiB segments, a 16 KiB head
const dirs: string[] = [];

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hotline-log-"));
  dirs.push(dir);
  return join(dir, "job");
}

function diskBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

/** Writes `chunks` chunks of `size` bytes, alternating stdout and stderr; returns the bytes and their streams. */
function fill(log: OutputLog, chunks: number, size: number): { bytes: Buffer; streams: OutputStream[] } {
  const parts: Buffer[] = [];
  const streams: OutputStream[] = [];
  for (let i = 0; i < chunks; i++) {
    const stream: OutputStream = i % 2 ? "stderr" : "stdout";
    const data = Buffer.alloc(size, String.fromCharCode(97 + (i % 26)));
    log.append(stream, data);
    parts.push(data);
    for (let j = 0; j < size; j++) streams.push(stream);
  }
  return { bytes: Buffer.concat(parts), streams };
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("OutputLog", () => {
  it("keeps head and tail within the cap and reads every kept byte with its stream", () => {
    const dir = freshDir();
    const log = OutputLog.create(dir, CAP);
    const { bytes, streams } = fill(log, 200, 500);
    log.close();
    expect(log.size).toBe(100_000);
    expect(log.omittedBytes).toBeGreaterThan(100_000 - CAP);
    expect(diskBytes(dir)).toBeLessThanOrEqual(CAP + 1024);
    for (const reopened of [log, OutputLog.open(dir, CAP)]) {
      let pos = 0;
      let seen = 0;
      for (;;) {
        const { spans, from, next } = reopened.spans(pos, 3000);
        if (next === pos) break;
        expect(from).toBeGreaterThanOrEqual(pos);
        for (const span of spans) {
          expect(span.stream).toBe(streams[span.offset]);
          expect(streams[span.offset + span.length - 1]).toBe(span.stream);
          const { pieces } = reopened.read(span.offset, span.length, span.stream);
          expect(Buffer.concat(pieces.map((p) => p.data))).toEqual(bytes.subarray(span.offset, span.offset + span.length));
          seen += span.length;
        }
        pos = next;
      }
      expect(seen).toBe(100_000 - reopened.omittedBytes);
    }
  });

  it("starts a read inside the omitted middle at the first kept byte", () => {
    const log = OutputLog.create(freshDir(), CAP);
    fill(log, 200, 500);
    const { from, spans } = log.spans(50_000, 100);
    expect(from).toBeGreaterThan(50_000);
    expect(spans[0]?.offset).toBe(from);
  });

  it("keeps only one stream's bytes when asked, and tailStart counts only them", () => {
    const log = OutputLog.create(freshDir(), 1024 * 1024);
    fill(log, 10, 100);
    const { pieces, next } = log.read(0, 10_000, "stderr");
    expect(pieces.every((p) => p.stream === "stderr")).toBe(true);
    expect(pieces.reduce((n, p) => n + p.data.length, 0)).toBe(500);
    expect(next).toBe(1000);
    expect(log.tailStart(150, "stderr")).toBe(750); // the last stderr chunk (900..999) and half the one before (700..799)
    expect(log.tailStart(150)).toBe(850);
    expect(log.tailStart(10_000)).toBe(0);
  });

  it("stays within the cap, index included, when every byte switches streams", () => {
    const dir = freshDir();
    const log = OutputLog.create(dir, CAP);
    for (let i = 0; i < 40_000; i++) log.append(i % 2 ? "stderr" : "stdout", Buffer.from("x"));
    log.close();
    expect(diskBytes(dir)).toBeLessThanOrEqual(CAP + 1024);
    const reopened = OutputLog.open(dir, CAP);
    const { spans } = reopened.spans(0, 10);
    expect(spans.map((s) => s.stream)).toEqual([
      "stdout",
      "stderr",
      "stdout",
      "stderr",
      "stdout",
      "stderr",
      "stdout",
      "stderr",
      "stdout",
      "stderr",
    ]);
  });

  it("reads short, never throws, when a segment file has vanished", () => {
    const dir = freshDir();
    const log = OutputLog.create(dir, CAP);
    log.append("stdout", Buffer.alloc(10_000, "z")); // one run: segments at 0, 4096, 8192
    log.close();
    const reopened = OutputLog.open(dir, CAP);
    rmSync(join(dir, `seg-${"4096".padStart(15, "0")}.log`));
    const first = reopened.read(0, 10_000);
    expect(first.next).toBe(4096);
    const second = reopened.read(first.next, 10_000);
    expect(second.from).toBe(8192);
    expect(second.next).toBe(10_000);
    expect(reopened.omittedBytes).toBe(4096);
  });

  it("stages small appends into one write, which a read or STAGE_MS brings to disk", async () => {
    const dir = freshDir();
    const log = OutputLog.create(dir, 64 * 1024 * 1024);
    const segment = join(dir, `seg-${"0".padStart(15, "0")}.log`);
    const chunks = Array.from({ length: 16 }, (_, i) => Buffer.alloc(4096, 97 + i));
    for (const chunk of chunks) log.append("stdout", chunk);
    expect(log.size).toBe(65_536);
    expect(statSync(segment).size).toBe(0); // staged, not yet written
    const { pieces } = log.read(60_000, 5536);
    expect(Buffer.concat(pieces.map((p) => p.data))).toEqual(Buffer.concat(chunks).subarray(60_000));
    expect(statSync(segment).size).toBe(65_536); // the read wrote them first
    log.append("stderr", Buffer.alloc(100, "x"));
    for (let waited = 0; statSync(segment).size < 65_636 && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    expect(statSync(segment).size).toBe(65_636); // the timer wrote them
    log.close();
    expect(
      OutputLog.open(dir, 64 * 1024 * 1024)
        .spans(0, 100_000)
        .spans.map((s) => s.stream),
    ).toEqual(["stdout", "stderr"]);
  });

  it("keeps exactly what the kernel took when a staged write fails, and reports a timer's failure", async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    symlinkSync("/dev/full", join(dir, `seg-${"0".padStart(15, "0")}.log`));
    const log = OutputLog.create(dir, 64 * 1024 * 1024);
    const failures: string[] = [];
    log.onWriteError = (err) => failures.push(err.code ?? "?");
    log.append("stdout", Buffer.alloc(1000, "a"));
    log.append("stderr", Buffer.alloc(1000, "b"));
    expect(log.size).toBe(2000);
    for (let waited = 0; failures.length === 0 && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    expect(failures).toEqual(["ENOSPC"]);
    expect(log.size).toBe(0); // /dev/full took nothing
    expect(log.spans(0, 10_000).spans).toEqual([]);
    log.append("stdout", Buffer.alloc(10, "c"));
    expect(() => log.flush()).toThrow(/ENOSPC/);
    expect(log.size).toBe(0);
    log.close();
  });

  it("keeps every byte of many logs staging at once (more than the pool's stages)", () => {
    const logs = Array.from({ length: 20 }, () => OutputLog.create(freshDir(), 64 * 1024 * 1024));
    const expected = logs.map(() => [] as Buffer[]);
    for (let round = 0; round < 40; round++)
      logs.forEach((log, i) => {
        const chunk = Buffer.alloc(4096, (round * 7 + i) % 256);
        log.append(round % 3 ? "stdout" : "stderr", chunk);
        expected[i]!.push(chunk);
      });
    logs.forEach((log, i) => {
      const { pieces } = log.read(0, 1 << 20);
      expect(Buffer.concat(pieces.map((p) => p.data))).toEqual(Buffer.concat(expected[i]!));
      log.close();
    });
  });
});

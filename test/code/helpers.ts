import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { expect } from "vitest";
import type { Frame, TestClient } from "../helpers/daemon.js";

/** Debian's Python, the one with python3-matplotlib, -pandas and -pil (`python3` on PATH may be another). */
export const PYTHON = process.env.HOTLINE_TEST_PYTHON || "/usr/bin/python3";

/** Whether the image's Python with matplotlib, pandas and PIL is here; HOTLINE_REQUIRE_PYTHON=1 makes its absence a failure. */
export function pythonUsable(): boolean {
  const probe = spawnSync(PYTHON, ["-c", "import matplotlib, pandas, PIL"], { encoding: "utf8", timeout: 60_000 });
  if (probe.status === 0) return true;
  const why = `${PYTHON} cannot import matplotlib, pandas and PIL`;
  if (process.env.HOTLINE_REQUIRE_PYTHON === "1") throw new Error(`${why}; HOTLINE_REQUIRE_PYTHON=1 requires them`);
  console.warn(`[skip] ${why}: the Python code-context tests are skipped`);
  return false;
}

export const WAIT = 60_000;

/** code.run with `wait`: the reply once the run ended. */
export async function run(client: TestClient, code: string, extra: Record<string, unknown> = {}): Promise<Frame> {
  const reply = await client.ok("code.run", { code, wait: WAIT, ...extra }, WAIT + 10_000);
  expect(reply.result, `the run of ${JSON.stringify(code)} ended within wait: ${JSON.stringify(reply.job)}`).toBeDefined();
  return reply;
}

/** The text/plain of a run's result value. */
export function resultText(reply: Frame): string | undefined {
  return reply.result.outputs.find((o: Frame) => o.type === "result")?.data["text/plain"];
}

/** The whole output log of a job. */
export async function outputOf(client: TestClient, job: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let from = 0; ; ) {
    const page = await client.ok("jobs.output", { job, from, limit: 4 * 1024 * 1024 });
    parts.push(Buffer.from(page.data, page.encoding === "base64" ? "base64" : "utf8"));
    if (page.eof || page.next === from) return Buffer.concat(parts);
    from = page.next;
  }
}

/** A run's file, read whole with code.file. */
export async function runFile(client: TestClient, job: string, file: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let offset = 0; ; ) {
    const page = await client.ok("code.file", { job, file, offset });
    parts.push(Buffer.from(page.data, "base64"));
    if (page.eof) return Buffer.concat(parts);
    offset = page.next;
  }
}

/**
 * Decodes a PNG far enough to know it is one: the signature, chunk CRCs, the IHDR size, and the
 * IDAT stream inflated to exactly one filter byte plus `width` pixels per row (8-bit RGB or RGBA).
 */
export function decodePng(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString("latin1");
    const body = png.subarray(at + 8, at + 8 + length);
    expect(png.readUInt32BE(at + 8 + length), `CRC of ${type}`).toBe(crc32(png.subarray(at + 4, at + 8 + length)));
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      expect(body[8], "bit depth").toBe(8);
      channels = { 2: 3, 6: 4 }[body[9]!] ?? 0;
      expect(channels, `colour type ${body[9]}`).toBeGreaterThan(0);
    }
    if (type === "IDAT") idat.push(body);
    if (type === "IEND") break;
    at += 12 + length;
  }
  expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * channels));
  return { width, height };
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Whether a process runs (a zombie is dead, only not reaped yet by whoever inherited it). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Resolves once none of `pids` runs; fails naming the ones still running after `timeoutMs`. */
export async function gone(pids: number[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(running) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(pids.filter(running), "processes still running").toEqual([]);
}

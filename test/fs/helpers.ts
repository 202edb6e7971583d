import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import type { TestClient } from "../helpers/daemon.js";

/** The raw bytes per chunk the guide recommends (512 KiB). */
export const CHUNK = 512 * 1024;

export function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A fresh directory outside the daemon's own ones, removed after the test. */
export function scratch(prefix = "hotline-fs-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Uploads `data` in base64 chunks (files.write with upload/offset/final); resolves with the final result. */
export async function upload(
  client: TestClient,
  path: string,
  data: Buffer,
  extra: Record<string, unknown> = {},
  chunk = CHUNK,
): Promise<Record<string, any>> {
  let id: string | undefined;
  for (let offset = 0; ; offset += chunk) {
    const piece = data.subarray(offset, offset + chunk);
    const final = offset + chunk >= data.length;
    const params: Record<string, unknown> = {
      path,
      data: piece.toString("base64"),
      encoding: "base64",
      final,
      ...(id ? { upload: id, offset } : extra),
    };
    const result = await client.ok("files.write", params);
    if (final) return result;
    id = result.upload as string;
  }
}

/** Reads a whole file with files.read in slices; returns its bytes and the last reply (with sha256). */
export async function readAll(client: TestClient, path: string, limit?: number): Promise<{ bytes: Buffer; last: Record<string, any> }> {
  const pieces: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const r = await client.ok("files.read", { path, offset, ...(limit ? { limit } : {}) });
    pieces.push(Buffer.from(r.data, r.encoding === "base64" ? "base64" : "utf8"));
    offset = r.next;
    if (r.eof) return { bytes: Buffer.concat(pieces), last: r };
  }
}

/** Sends state.info every few ms until `done` settles; resolves with the round trips in ms, sorted. */
export async function infoLatencies(client: TestClient, done: Promise<unknown>, minSamples = 20): Promise<number[]> {
  let finished = false;
  void done.then(
    () => (finished = true),
    () => (finished = true),
  );
  const samples: number[] = [];
  while (!finished || samples.length < minSamples) {
    const t = performance.now();
    await client.ok("state.info", {}, 120_000);
    samples.push(performance.now() - t);
    await new Promise((resolve) => setTimeout(resolve, 5)); // pacing, so the observer does not itself load the daemon
  }
  return samples.sort((a, b) => a - b);
}

/** The slowest state.info round trip of `observer` while `work` runs, and the work's result. */
export async function worstInfoDuring<T>(observer: TestClient, work: Promise<T>): Promise<{ worstMs: number; result: T }> {
  const latencies = await infoLatencies(observer, work, 3);
  return { worstMs: Math.round(latencies.at(-1)!), result: await work };
}

/** A process's resident set in MiB (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kb / 1024);
}

/** Its highest resident set so far in MiB (VmHWM). */
export function peakRssMiB(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kb / 1024);
}

/** Child processes of `pid` named `comm` (from /proc/<child>/stat). */
export function childrenNamed(pid: number, comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const m = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
      if (m && m[1] === comm && Number(m[2]) === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Creates `count` empty files in `dir` in one python3 process, without blocking the test's event loop (its clients answer pings). */
export async function manyFiles(dir: string, count: number): Promise<void> {
  const script = `import os,sys\nd=sys.argv[1]\nfor i in range(int(sys.argv[2])): os.close(os.open(f"{d}/f{i:07d}", os.O_CREAT|os.O_WRONLY, 0o644))`;
  await promisify(execFile)("python3", ["-c", script, dir, String(count)], { timeout: 600_000 });
}

/** Like scratch, on tmpfs (/dev/shm) when it has room: creating 100,000s of files on a loaded disk takes minutes. */
export function bigScratch(prefix = "hotline-fs-big-", cleanup: (fn: () => void) => void = onTestFinished): string {
  let base = tmpdir();
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.bavail * fs.bsize >= 2 * 1024 ** 3) base = "/dev/shm";
  } catch {
    // no /dev/shm: the temporary directory
  }
  const dir = mkdtempSync(join(base, prefix));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

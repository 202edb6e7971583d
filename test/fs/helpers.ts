import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
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

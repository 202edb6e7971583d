import { createHash, type Hash } from "node:crypto";
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";

const HASH_CHUNK = 1024 * 1024;

/** SHA-256 of an open file from its start, read in 1 MiB pieces on the thread pool (the event loop only hashes). */
export async function hashHandle(handle: FileHandle): Promise<string> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(HASH_CHUNK);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, HASH_CHUNK, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest("hex");
}

export function sha256Hex(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

const MAX_RUNNING = 64;

/**
 * Hashes of files being read front to back in pieces: each files.read continues the hash of the
 * piece before, so the reply that reaches the end carries the whole file's SHA-256 without
 * reading the file twice. Keyed by the file's identity and version; bounded, oldest dropped.
 */
export class SequentialHashes {
  private readonly running = new Map<string, { hash: Hash; position: number }>();

  static key(st: Stats): string {
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  }

  /** Feeds the bytes of [offset, offset+bytes.length); returns the digest when they end the file and the hash covered all before. */
  feed(st: Stats, offset: number, bytes: Buffer): string | undefined {
    const key = SequentialHashes.key(st);
    let state = this.running.get(key);
    if (offset === 0) state = { hash: createHash("sha256"), position: 0 };
    if (!state || state.position !== offset) return undefined;
    this.running.delete(key);
    state.hash.update(bytes);
    state.position += bytes.length;
    if (state.position >= st.size) return state.hash.digest("hex");
    this.running.set(key, state);
    if (this.running.size > MAX_RUNNING) this.running.delete(this.running.keys().next().value!);
    return undefined;
  }
}

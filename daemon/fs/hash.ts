import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";

/** Bytes per read while hashing on the event loop (small files only; the reads yield between pieces). */
const UPDATE_SLICE = 256 * 1024;
/** Files above this are hashed by a `sha256sum` child reading our descriptor, off the event loop entirely. */
const CHILD_HASH_ABOVE = 8 * 1024 * 1024;

/** SHA-256 of an open regular file from its start. */
export async function hashHandle(handle: FileHandle, size: number): Promise<string> {
  if (size > CHILD_HASH_ABOVE) {
    const digest = await hashInChild(handle).catch(() => undefined);
    if (digest) return digest;
  }
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(UPDATE_SLICE);
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, UPDATE_SLICE, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest("hex");
}

/**
 * `sha256sum` reading the descriptor as its stdin (the daemon only ever reads at explicit
 * positions, so the descriptor's own offset is still 0). Undefined when it is not installed.
 */
function hashInChild(handle: FileHandle): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn("sha256sum", [], { stdio: [handle.fd, "pipe", "ignore"] });
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.once("error", () => resolve(undefined));
    child.once("close", (code) => {
      const m = /^([0-9a-f]{64})\s/.exec(out);
      resolve(code === 0 && m ? m[1] : undefined);
    });
  });
}

export function sha256Hex(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Files up to this size get their hash started in the background when a first slice is read. */
const BACKGROUND_MAX_BYTES = 1024 ** 3;
const MAX_REMEMBERED = 64;
const MAX_BACKGROUND_RUNNING = 4;

/**
 * Whole-file hashes for files read in slices. The first slice of a multi-slice read starts a
 * `sha256sum` child on the file (another core, no event-loop time); the reply that reaches the
 * end awaits it, so the hash never makes a reader wait for a second pass and pipelined reads
 * need no order. Keyed by the file's identity and version, so a changed file is hashed anew;
 * bounded in entries and in children running at once.
 */
export class BackgroundHashes {
  private readonly known = new Map<string, Promise<string | undefined>>();
  private running = 0;

  static key(st: Stats): string {
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  }

  /** Starts hashing `path` (as it is now, `st`) unless it is already known or running. */
  start(path: string, st: Stats, open: (path: string) => Promise<FileHandle>): void {
    const key = BackgroundHashes.key(st);
    if (this.known.has(key) || st.size > BACKGROUND_MAX_BYTES || this.running >= MAX_BACKGROUND_RUNNING) return;
    this.running++;
    const digest = (async () => {
      const handle = await open(path);
      try {
        const now = await handle.stat();
        return BackgroundHashes.key(now) === key ? await hashInChild(handle) : undefined;
      } finally {
        await handle.close();
      }
    })()
      .catch(() => undefined)
      .finally(() => this.running--);
    this.known.set(key, digest);
    if (this.known.size > MAX_REMEMBERED) this.known.delete(this.known.keys().next().value!);
  }

  /** The whole file's hash: the background one when there is one for this version, else computed now from `handle`. */
  async digest(st: Stats, handle: FileHandle): Promise<string> {
    const known = await this.known.get(BackgroundHashes.key(st));
    return known ?? hashHandle(handle, st.size);
  }
}

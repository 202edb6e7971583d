import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { startChild } from "../watchdog/child-wait.js";

/** Bytes per read while hashing on the event loop (small files only; the reads yield between pieces). */
const UPDATE_SLICE = 256 * 1024;
/** Files above this are hashed by a `sha256sum` child reading our descriptor, off the event loop entirely. */
const CHILD_HASH_ABOVE = 8 * 1024 * 1024;

/** SHA-256 of an open regular file from its start; `signal` stops the work (the promise then rejects). */
export async function hashHandle(handle: FileHandle, size: number, signal?: AbortSignal): Promise<string> {
  if (size > CHILD_HASH_ABOVE) {
    const digest = await hashInChild(handle, signal).catch(() => undefined);
    signal?.throwIfAborted();
    if (digest) return digest;
  }
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(UPDATE_SLICE);
  for (let position = 0; ; ) {
    signal?.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, 0, UPDATE_SLICE, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest("hex");
}

/**
 * `sha256sum` reading the descriptor as its stdin (the daemon only ever reads at explicit
 * positions, so the descriptor's own offset is still 0). Undefined when it is not installed, or
 * when `signal` ended it (the child is killed then).
 */
function hashInChild(handle: FileHandle, signal?: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(undefined);
    const child = startChild(() => spawn("sha256sum", [], { stdio: [handle.fd, "pipe", "ignore"], signal, killSignal: "SIGKILL" }));
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

const MAX_REMEMBERED = 64;
const MAX_BACKGROUND_RUNNING = 4;

/**
 * Whole-file hashes for files one connection reads in slices. A slice that does not reach the
 * end starts a `sha256sum` child on the file (another core, no event-loop time); the reply that
 * reaches the end awaits it, so the hash never makes a reader wait for a second pass and
 * pipelined reads need no order. Keyed by the file's identity and version, so a changed file is
 * hashed anew; bounded in entries and in children running at once; `signal` (the connection's
 * end) kills what still runs.
 */
export class BackgroundHashes {
  private readonly known = new Map<string, Promise<string | undefined>>();
  private running = 0;

  constructor(private readonly signal?: AbortSignal) {}

  static key(st: Stats): string {
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  }

  /** Starts hashing `path` (as it is now, `st`) unless it is already known or running. */
  start(path: string, st: Stats, open: (path: string) => Promise<FileHandle>): void {
    const key = BackgroundHashes.key(st);
    if (this.known.has(key) || this.running >= MAX_BACKGROUND_RUNNING || this.signal?.aborted) return;
    this.running++;
    const digest = (async () => {
      const handle = await open(path);
      try {
        const now = await handle.stat();
        return BackgroundHashes.key(now) === key ? await hashInChild(handle, this.signal) : undefined;
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
    return known ?? hashHandle(handle, st.size, this.signal);
  }
}

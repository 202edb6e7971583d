import { spawn } from "node:child_process";
import { createHash, type Hash } from "node:crypto";
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { setImmediate as yieldToLoop } from "node:timers/promises";

/** Bytes hashed on the event loop between yields: ~0.2 ms of SHA-256, so a big update never stalls other clients. */
const UPDATE_SLICE = 256 * 1024;
/** Files above this are hashed by a `sha256sum` child reading our descriptor, off the event loop entirely. */
const CHILD_HASH_ABOVE = 8 * 1024 * 1024;

/** Feeds `bytes` to `hash` in slices, yielding to the event loop between them. */
export async function updateYielding(hash: Hash, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; at += UPDATE_SLICE) {
    if (at > 0) await yieldToLoop();
    hash.update(bytes.subarray(at, at + UPDATE_SLICE));
  }
}

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

  /** Feeds the bytes of [offset, offset+bytes.length); resolves with the digest when they end the file and the hash covered all before. */
  async feed(st: Stats, offset: number, bytes: Buffer): Promise<string | undefined> {
    const key = SequentialHashes.key(st);
    let state = this.running.get(key);
    if (offset === 0) state = { hash: createHash("sha256"), position: 0 };
    if (!state || state.position !== offset) return undefined;
    this.running.delete(key);
    state.position += bytes.length; // claimed before the await, so a concurrent read of the same slice cannot feed it twice
    await updateYielding(state.hash, bytes);
    if (state.position >= st.size) return state.hash.digest("hex");
    this.running.set(key, state);
    if (this.running.size > MAX_RUNNING) this.running.delete(this.running.keys().next().value!);
    return undefined;
  }
}

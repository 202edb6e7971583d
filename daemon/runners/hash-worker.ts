import { createHash, type Hash } from "node:crypto";
import { readSync } from "node:fs";
import { parentPort } from "node:worker_threads";

/**
 * To the hashing thread: hash the file open as `fd` from where this stream stopped up to byte
 * `upTo` (and answer the digest when `digest`); or forget the stream (`drop`).
 */
export type HashRequest = { stream: number; fd: number; upTo: number; digest?: true } | { stream: number; drop: true };

/** From it: the stream is hashed up to `hashed`, or its digest, or why it failed; `dropped` once forgotten. */
export type HashReply =
  | { stream: number; hashed: number }
  | { stream: number; hex: string }
  | { stream: number; error: string }
  | { stream: number; dropped: true };

const READ_BYTES = 1024 * 1024;
const buffer = Buffer.allocUnsafe(READ_BYTES);
const streams = new Map<number, { hash: Hash; at: number }>();

function advance(m: { stream: number; fd: number; upTo: number }): { hash: Hash; at: number } {
  let state = streams.get(m.stream);
  if (!state) {
    state = { hash: createHash("sha256"), at: 0 };
    streams.set(m.stream, state);
  }
  while (state.at < m.upTo) {
    const n = readSync(m.fd, buffer, 0, Math.min(READ_BYTES, m.upTo - state.at), state.at);
    if (n === 0) throw new Error(`the file ended at byte ${state.at}, before ${m.upTo}`);
    state.hash.update(buffer.subarray(0, n));
    state.at += n;
  }
  return state;
}

parentPort!.on("message", (m: HashRequest) => {
  let reply: HashReply;
  if ("drop" in m) {
    streams.delete(m.stream);
    reply = { stream: m.stream, dropped: true };
  } else {
    try {
      const state = advance(m);
      if (m.digest) streams.delete(m.stream);
      reply = m.digest ? { stream: m.stream, hex: state.hash.digest("hex") } : { stream: m.stream, hashed: state.at };
    } catch (err) {
      streams.delete(m.stream);
      reply = { stream: m.stream, error: (err as Error).message };
    }
  }
  parentPort!.postMessage(reply);
});

import { createHash } from "node:crypto";
import { Worker } from "node:worker_threads";

/**
 * SHA-256 of a stream of batches, computed either inline or on a worker thread. On a large
 * download the hash is as much CPU as parsing the HTTP body; moving it off the main thread lets
 * both run at once (and keeps the daemon's event loop free). Batches are copied to the worker
 * (structured clone); at most MAX_UNHASHED_BYTES wait there, so memory stays bounded.
 */

export interface Sha256Hasher {
  /** Adds a batch; resolves when the caller may send more. */
  update(batch: Buffer[]): Promise<void>;
  digest(): Promise<string>;
  /** Releases the worker (idempotent; also after digest). */
  close(): void;
}

const MAX_UNHASHED_BYTES = 32 * 1024 * 1024;

/** The worker's whole program: CommonJS evaluated in place, so it needs no file of its own in the build. */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const hash = require("node:crypto").createHash("sha256");
parentPort.on("message", (batch) => {
  if (batch === null) return parentPort.postMessage({ digest: hash.digest("hex") });
  let bytes = 0;
  for (const chunk of batch) { hash.update(chunk); bytes += chunk.byteLength; }
  parentPort.postMessage({ ack: bytes });
});
`;

/** Hashes on the calling thread (small bodies: a worker's start-up would cost more than it saves). */
export function inlineSha256(): Sha256Hasher {
  const hash = createHash("sha256");
  return {
    async update(batch) {
      for (const b of batch) hash.update(b);
    },
    async digest() {
      return hash.digest("hex");
    },
    close() {},
  };
}

/** Hashes on a worker thread. */
export function workerSha256(): Sha256Hasher {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  worker.unref();
  let unhashed = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let onDigest: ((digest: string) => void) | undefined;
  const release = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  worker.on("message", (m: { ack?: number; digest?: string }) => {
    if (m.ack !== undefined) {
      unhashed -= m.ack;
      if (unhashed <= MAX_UNHASHED_BYTES / 2) release();
    } else if (m.digest !== undefined) onDigest?.(m.digest);
  });
  worker.on("error", (err) => {
    failure = err;
    release();
  });
  const check = () => {
    if (failure) throw new Error(`hashing failed: ${failure.message}`);
  };
  return {
    async update(batch) {
      check();
      // A small view of a large ArrayBuffer would clone the whole buffer: copy those instead.
      const owned = batch.map((c) => (c.buffer.byteLength > 2 * c.byteLength ? Buffer.from(c) : c));
      unhashed += owned.reduce((n, c) => n + c.byteLength, 0);
      worker.postMessage(owned);
      if (unhashed > MAX_UNHASHED_BYTES) await new Promise<void>((resolve) => (wake = resolve));
      check();
    },
    async digest() {
      check();
      const digest = await new Promise<string>((resolve, reject) => {
        onDigest = resolve;
        worker.once("error", reject);
        worker.postMessage(null);
      });
      void worker.terminate();
      return digest;
    },
    close() {
      void worker.terminate();
    },
  };
}

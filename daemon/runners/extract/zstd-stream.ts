import { existsSync } from "node:fs";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ActionError, type ErrorCode } from "../../../protocol/errors.js";
import { Pacer } from "./pacer.js";
import { ZstdBlockDecoder } from "./zstd-decoder.js";

/**
 * The decompressed bytes of a zstd stream. fzstd is pure JS, and one block under a 128 MiB window
 * costs one move of that window (~10–20 ms): on the event loop, even paced a block at a time,
 * that made state.info wait up to ~130 ms (p99) on a loaded machine, against ~30–50 ms when the
 * decoder runs on a worker thread, which is also no slower overall (bench/files.ts, issue 10.1).
 * So the decoder runs on a worker; the event loop only passes chunks. When the worker's compiled
 * script is absent (tests importing the TypeScript sources), it decodes in-thread, paced.
 */

const WORKER_URL = new URL("./zstd-worker.js", import.meta.url);
/** Decompressed pieces (up to 128 KiB each) the worker may send ahead of the consumer. */
const PIECES_IN_FLIGHT = 16;

/** Yields the decompressed bytes of the zstd stream `source`; throws limit_exceeded as ZstdBlockDecoder does. */
export function zstdChunks(source: Readable): AsyncGenerator<Uint8Array> {
  return existsSync(fileURLToPath(WORKER_URL)) ? onWorker(source) : inThread(source);
}

type WorkerMessage = {
  data?: Uint8Array;
  need?: true;
  done?: true;
  error?: { code?: ErrorCode; message: string; path?: string; details?: Record<string, unknown> };
};

async function* onWorker(source: Readable): AsyncGenerator<Uint8Array> {
  const credits = new Int32Array(new SharedArrayBuffer(4));
  credits[0] = PIECES_IN_FLIGHT;
  const worker = new Worker(WORKER_URL, { workerData: { credits: credits.buffer } });
  const inbox: WorkerMessage[] = [];
  let wake: (() => void) | undefined;
  const deliver = (m: WorkerMessage): void => {
    inbox.push(m);
    wake?.();
  };
  worker.on("message", deliver);
  worker.on("error", (err) => deliver({ error: { message: err.message } }));
  worker.on("exit", () => deliver({ error: { message: "the zstd decoder thread ended unexpectedly" } }));
  const input = (source as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const sendNext = async (): Promise<void> => {
    const next = await input.next();
    worker.postMessage(next.done ? { end: true } : { chunk: next.value });
  };
  try {
    await sendNext();
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const m = inbox.shift()!;
      if (m.data) {
        yield m.data;
        Atomics.add(credits, 0, 1);
        Atomics.notify(credits, 0);
      } else if (m.need) await sendNext();
      else if (m.done) return;
      else if (m.error)
        throw m.error.code
          ? new ActionError(m.error.code, m.error.message, { path: m.error.path, details: m.error.details })
          : new Error(m.error.message);
    }
  } finally {
    worker.removeAllListeners("exit");
    await worker.terminate();
    await input.return?.();
  }
}

async function* inThread(source: Readable): AsyncGenerator<Uint8Array> {
  const ready: Uint8Array[] = [];
  const decoder = new ZstdBlockDecoder((chunk) => ready.push(chunk));
  const pacer = new Pacer();
  for await (const chunk of source as AsyncIterable<Buffer>) {
    for (const _ of decoder.feed(chunk)) {
      while (ready.length > 0) yield ready.shift()!;
      await pacer.turn();
    }
  }
  decoder.end();
  while (ready.length > 0) yield ready.shift()!;
}

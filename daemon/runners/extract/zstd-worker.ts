import { parentPort, workerData } from "node:worker_threads";
import { ActionError } from "../../../protocol/errors.js";
import { ZstdBlockDecoder } from "./zstd-decoder.js";

/**
 * The zstd decoder's thread (see zstd-stream.ts). Messages in: `{chunk}` then `{end: true}`.
 * Out: `{data}` per decompressed piece, `{need: true}` when a chunk is done, `{done: true}`, or
 * `{error}`. Output waits for credits in shared memory, so a slow consumer stops the decoder here
 * (blocking this thread is fine) instead of queueing decompressed bytes without bound.
 */

const credits = new Int32Array((workerData as { credits: SharedArrayBuffer }).credits);
const port = parentPort!;

const decoder = new ZstdBlockDecoder((chunk) => {
  while (Atomics.load(credits, 0) <= 0) Atomics.wait(credits, 0, 0, 1000);
  Atomics.sub(credits, 0, 1);
  // Copied (not transferred): fzstd still reads the block into its window after this callback.
  port.postMessage({ data: chunk });
});

port.on("message", (message: { chunk?: Uint8Array; end?: boolean }) => {
  try {
    if (message.chunk) {
      for (const _ of decoder.feed(message.chunk));
      port.postMessage({ need: true });
    } else {
      decoder.end();
      port.postMessage({ done: true });
    }
  } catch (err) {
    const e = err as Error;
    port.postMessage({
      error:
        err instanceof ActionError
          ? { code: err.code, message: err.message, path: err.path, details: err.details }
          : { message: e?.message ?? String(err) },
    });
  }
});

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ActionError, type ErrorCode } from "../../protocol/errors.js";
import { computeEdit, type Edit, type EditOutcome } from "./edit-apply.js";

/**
 * Large files.edit work on a worker thread. Its cost is file size × edits (1,000 edits of a
 * 15 MiB file: ~10 s of CPU), which on the event loop held every other client for as long; here
 * the event loop only passes the bytes (transferred, not copied). At most MAX_RUNNING threads at
 * once, the rest wait their turn; the asking connection's end terminates its thread. When the
 * compiled worker script is absent (tests importing the TypeScript sources), it runs in-thread.
 */

const WORKER_URL = new URL("./edit-worker.js", import.meta.url);
const MAX_RUNNING = 2;
/** Heap of one edit thread: the text, its parts and the result of a 16 MiB file fit several times over. */
const HEAP_MB = 384;

let running = 0;
const waiting: Array<() => void> = [];

async function turn(signal: AbortSignal | undefined): Promise<() => void> {
  while (running >= MAX_RUNNING) {
    signal?.throwIfAborted();
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

type Reply = { outcome?: EditOutcome; error?: { code: ErrorCode; message: string; path?: string; details?: Record<string, unknown> } };

/** computeEdit on a worker thread; rejects with the same ActionErrors, or when `signal` aborts. */
export async function runEditWorker(
  bytes: Buffer,
  edits: readonly Edit[],
  ifMatch: string | undefined,
  real: string,
  signal?: AbortSignal,
): Promise<EditOutcome> {
  if (!existsSync(fileURLToPath(WORKER_URL))) return computeEdit(bytes, edits, ifMatch, real);
  const release = await turn(signal);
  try {
    signal?.throwIfAborted();
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: HEAP_MB } });
    let onAbort: (() => void) | undefined;
    try {
      const reply = await new Promise<Reply>((resolve, reject) => {
        onAbort = () => reject(signal!.reason);
        signal?.addEventListener("abort", onAbort, { once: true });
        worker.once("message", (m: Reply) => resolve(m));
        worker.once("error", (err: NodeJS.ErrnoException) =>
          reject(
            err.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? new ActionError("limit_exceeded", `the edits of ${real} need more memory than files.edit allows; use files.write`)
              : new ActionError("internal", `files.edit thread failed: ${err.message}`),
          ),
        );
        worker.once("exit", () => reject(new ActionError("internal", "the files.edit thread ended unexpectedly")));
        // A copy of the bytes goes over when they do not own their memory (a pooled Buffer).
        const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
        const data = own ? bytes : Buffer.from(bytes);
        worker.postMessage({ bytes: data, edits, ifMatch, real }, [data.buffer as ArrayBuffer]);
      });
      if (reply.error)
        throw new ActionError(reply.error.code, reply.error.message, { path: reply.error.path, details: reply.error.details });
      return reply.outcome!;
    } finally {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      worker.removeAllListeners("exit");
      await worker.terminate();
    }
  } finally {
    release();
  }
}

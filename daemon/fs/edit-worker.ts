import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { ActionError } from "../../protocol/errors.js";
import { computeEdit, type Edit } from "./edit-apply.js";

/**
 * The thread of a large files.edit (see edit-thread.ts). One message in: `{bytes, edits, ifMatch,
 * real}`; one out: `{outcome}` (its bytes transferred, not copied) or `{error}`.
 */
const port = parentPort!;
// On Linux this thread alone: on a busy machine the event loop's thread is scheduled first.
try {
  setPriority(0, 10);
} catch {
  // not permitted: run at the daemon's priority
}

port.once("message", (m: { bytes: Uint8Array; edits: Edit[]; ifMatch?: string; real: string }) => {
  try {
    const outcome = computeEdit(m.bytes, m.edits, m.ifMatch, m.real);
    port.postMessage({ outcome }, [outcome.bytes.buffer as ArrayBuffer]);
  } catch (err) {
    const e = err instanceof ActionError ? err : new ActionError("internal", `files.edit failed: ${(err as Error).message}`);
    port.postMessage({ error: { code: e.code, message: e.message, path: e.path, details: e.details } });
  }
});

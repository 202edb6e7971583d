import type { Stats } from "node:fs";
import { ActionError } from "../../protocol/errors.js";
import { openRegularFile } from "../util/regular-file.js";
import { computeEdit, type Edit, MAX_EDIT_BYTES } from "./edit-apply.js";
import { runEditWorker } from "./edit-thread.js";
import { writeAtomic, type Published } from "./publish.js";

export { MAX_EDIT_BYTES } from "./edit-apply.js";
/** Edits whose work (file size × edits) stays under this run on the event loop; the rest on a worker thread. */
const INLINE_WORK = 2 * 1024 * 1024;

export interface EditContext {
  /** The end of the asking connection: the edit stops, nothing is written. */
  signal?: AbortSignal;
  /** May refuse the opened file (e.g. a hard link to a guarded one). */
  check?: (st: Stats) => Promise<void>;
}

/**
 * Reads a UTF-8 file, applies the edits, and publishes the result only if the file did not change
 * meanwhile. Large work runs on a worker thread, so no edit holds up other clients.
 */
export async function editFile(
  real: string,
  edits: readonly Edit[],
  ifMatch: string | undefined,
  context: EditContext = {},
): Promise<Published & { replacements: number }> {
  const { handle, stats } = await openRegularFile(real);
  let bytes: Buffer;
  try {
    await context.check?.(stats);
    if (stats.size > MAX_EDIT_BYTES)
      throw new ActionError(
        "limit_exceeded",
        `${real} has ${stats.size} bytes; files.edit takes at most ${MAX_EDIT_BYTES}, use files.write`,
        { path: "/path" },
      );
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  const work = Math.max(bytes.length, 1) * edits.length;
  const outcome =
    work <= INLINE_WORK ? computeEdit(bytes, edits, ifMatch, real) : await runEditWorker(bytes, edits, ifMatch, real, context.signal);
  context.signal?.throwIfAborted();
  // Conditional on what was read, so an edit never overwrites a change made in between.
  const published = await writeAtomic(real, Buffer.from(outcome.bytes.buffer, outcome.bytes.byteOffset, outcome.bytes.byteLength), {
    ifMatch: outcome.current,
    sha256: outcome.sha256,
    signal: context.signal,
  });
  return { ...published, replacements: outcome.replacements };
}

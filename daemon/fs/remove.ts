import { opendir, lstat, rmdir, unlink } from "node:fs/promises";
import { join } from "node:path";

/** Names read from a directory before they are removed, and removals in flight at once. */
const BATCH = 256;
const IN_FLIGHT = 4;
/** A directory still not empty after this many passes (something keeps writing into it) is an error. */
const MAX_PASSES = 4;

/**
 * Removes a directory tree (links removed, never followed) a few entries at a time: a bounded
 * batch of names read with opendir, a handful of unlinks in flight, so neither memory nor the
 * event loop nor libuv's thread pool grows with the tree (fs.rm read a 300,000-entry directory
 * at once and queued a removal for every entry: a 3 s stall). `signal` stops it between entries,
 * leaving what was not yet removed.
 */
export async function removeTree(dir: string, signal?: AbortSignal): Promise<void> {
  for (let pass = 1; ; pass++) {
    const handle = await opendir(dir, { bufferSize: BATCH });
    const batch: string[] = [];
    try {
      for (;;) {
        signal?.throwIfAborted();
        const d = await handle.read();
        if (d) batch.push(join(dir, d.name));
        if (batch.length === BATCH || (!d && batch.length > 0)) await removeAll(batch.splice(0), signal);
        if (!d) break;
      }
    } finally {
      await handle.close().catch(() => undefined);
    }
    try {
      return await rmdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOTEMPTY" || pass >= MAX_PASSES) throw err;
    }
  }
}

async function removeAll(paths: string[], signal?: AbortSignal): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < paths.length) await removeOne(paths[next++]!, signal);
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, paths.length) }, lane));
}

async function removeOne(path: string, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  try {
    await unlink(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return; // removed meanwhile
    if ((code === "EISDIR" || code === "EPERM") && (await lstat(path)).isDirectory()) return removeTree(path, signal);
    throw err;
  }
}

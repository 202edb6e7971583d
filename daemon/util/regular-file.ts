import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { ActionError } from "../../protocol/errors.js";

function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Opens `path` for reading only when it is a regular file. A FIFO opened without O_NONBLOCK
 * would hold a libuv pool thread until a writer appears (four such calls hang every file action),
 * so the path is stat'ed first, opened non-blocking, and the open descriptor checked again.
 * `field` is the JSON Pointer named in the error.
 */
export async function openRegularFile(path: string, field = "/path"): Promise<{ handle: FileHandle; stats: Stats }> {
  let before: Stats;
  try {
    before = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new ActionError("not_found", `${path} does not exist`, { path: field });
    throw new ActionError("invalid_request", `cannot read ${path}: ${(err as Error).message}`, { path: field });
  }
  if (!before.isFile())
    throw new ActionError("invalid_request", `${path} is ${kindOf(before)}; only regular files are accepted`, { path: field });
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.ino !== before.ino || stats.dev !== before.dev) {
      throw new ActionError("conflict", `${path} changed while it was being opened; try again`, { path: field });
    }
    return { handle, stats };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Reads `path` synchronously only when it is a regular file of at most `maxBytes`; undefined when
 * it does not exist. For files a job controls that are read on the main thread: a sync open() of a
 * FIFO blocks the whole daemon until a writer appears, so the open is non-blocking and the opened
 * descriptor is checked. `field` is the JSON Pointer named in the error; `remedy` ends its message.
 */
export function readRegularFileSync(path: string, maxBytes: number, how: { field?: string; remedy?: string } = {}): Buffer | undefined {
  const { field = "/workspace", remedy = "replace it with a regular file or remove it" } = how;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ActionError("invalid_request", `cannot read ${path}: ${(err as Error).message}; ${remedy}`, {
      path: field,
      details: { file: path },
    });
  }
  try {
    const stats = fstatSync(fd);
    const refuse = !stats.isFile()
      ? `is ${kindOf(stats)}; only regular files are read`
      : stats.size > maxBytes
        ? `is larger than ${maxBytes} bytes`
        : undefined;
    if (refuse) {
      throw new ActionError(stats.isFile() ? "limit_exceeded" : "invalid_request", `${path} ${refuse}; ${remedy}`, {
        path: field,
        details: { file: path },
      });
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

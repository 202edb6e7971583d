import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";

const tempSibling = (path: string): string => `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;

/**
 * Replaces `path` with `data` so a reader never sees a half-written file and a crash keeps the
 * previous content: write a temporary sibling, fsync it, rename it over the target.
 */
export function writeFileAtomicSync(path: string, data: string | Buffer, options: { mode?: number; fsync?: boolean } = {}): void {
  const tmp = tempSibling(path);
  const fd = openSync(tmp, "w", options.mode ?? 0o644);
  try {
    writeSync(fd, typeof data === "string" ? Buffer.from(data) : data);
    if (options.fsync) fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * writeFileAtomicSync off the event loop, and durable when it resolves: the temporary sibling is
 * fsynced before the rename and the directory after it, so a crash at any point leaves the old
 * file or the new one, and once this resolves the new one survives a power cut.
 */
export async function writeFileDurable(path: string, data: string | Buffer, mode = 0o600): Promise<void> {
  const tmp = tempSibling(path);
  try {
    const handle = await open(tmp, "w", mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

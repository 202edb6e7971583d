import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";

/**
 * Replaces `path` with `data` so a reader never sees a half-written file and a crash keeps the
 * previous content: write a temporary sibling, fsync it, rename it over the target.
 */
export function writeFileAtomicSync(path: string, data: string | Buffer, options: { mode?: number; fsync?: boolean } = {}): void {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
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

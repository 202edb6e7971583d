import type { Stats } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import { basename } from "node:path";
import type { FileEntry, FileType } from "../../protocol/actions/files-fs.js";
import { fsError } from "./errors.js";

export function fileType(st: Stats): FileType {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "fifo";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
  return "other";
}

/** Octal permission bits as agents write them: "0644". */
export function modeString(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

/** The entry at `path` itself (a link is not followed; its target is reported as stored). */
export async function describe(path: string, field = "/path"): Promise<FileEntry> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (err) {
    throw fsError(err, path, field);
  }
  return fromStats(path, st, st.isSymbolicLink() ? await readlink(path).catch(() => undefined) : undefined);
}

export function fromStats(path: string, st: Stats, target?: string): FileEntry {
  const entry: FileEntry = {
    name: basename(path) || "/",
    path,
    type: fileType(st),
    size: st.size,
    mode: modeString(st.mode),
    mtime: st.mtime.toISOString(),
  };
  if (target !== undefined) entry.target = target;
  return entry;
}

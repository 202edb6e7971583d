import { constants } from "node:fs";
import { lstat, mkdir, open, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { tempSibling } from "../runners/temp-name.js";
import { ActionError } from "../../protocol/errors.js";
import { openRegularFile } from "../util/regular-file.js";
import { fsError, isMissing } from "./errors.js";
import { hashHandle, sha256Hex } from "./hash.js";
import { withPathLock } from "./path-lock.js";

/**
 * Atomic publication of new content: bytes go to a temporary sibling of the target (same
 * directory, so the rename cannot cross filesystems), are synced, and replace the target by one
 * rename — a reader or a crash sees the old file or the new one, never a mix.
 */

export interface PublishOptions {
  /** Permission bits; absent: the replaced file's, or 0644 for a new file. */
  mode?: number;
  /** A SHA-256 the current content must have, or "absent": the target must not exist. */
  ifMatch?: string;
  /** Create missing parent directories. */
  parents?: boolean;
  /** The data's SHA-256 when the caller already has it (hashing 16 MiB on the event loop costs ~40 ms). */
  sha256?: string;
  /** The asking connection's end: hashing the current file for ifMatch stops. */
  signal?: AbortSignal;
}

export interface Published {
  path: string;
  size: number;
  sha256: string;
  mtime: string;
}

const DEFAULT_MODE = 0o644;

/** Parses an octal mode string ("0644", "755"). */
export function parseMode(text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseInt(text, 8);
}

/** A new, exclusive temporary file beside `target`; its name starts with a dot and ends in .tmp. */
export async function openTemp(target: string, parents = false): Promise<{ temp: string; handle: FileHandle }> {
  const dir = dirname(target);
  if (parents) await mkdir(dir, { recursive: true }).catch((err: unknown) => Promise.reject(fsError(err, dir)));
  const temp = tempSibling(target, "hotline.tmp"); // cut to NAME_MAX in bytes, whatever the script
  try {
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    return { temp, handle };
  } catch (err) {
    if (isMissing(err))
      throw new ActionError("not_found", `directory ${dir} does not exist; create it or pass parents: true`, { path: "/path" });
    throw fsError(err, target);
  }
}

/** The SHA-256 of the file at `target`, or null when nothing is there. */
export async function currentSha256(target: string, signal?: AbortSignal): Promise<string | null> {
  try {
    await lstat(target);
  } catch (err) {
    if (isMissing(err)) return null;
    throw fsError(err, target);
  }
  const { handle, stats } = await openRegularFile(target);
  try {
    return await hashHandle(handle, stats.size, signal);
  } finally {
    await handle.close();
  }
}

/** Refuses when the target's current state is not what `ifMatch` expects; `conflict` names the current SHA-256. */
export async function checkIfMatch(target: string, ifMatch: string | undefined, signal?: AbortSignal): Promise<void> {
  if (ifMatch === undefined) return;
  const current = await currentSha256(target, signal);
  if (ifMatch === "absent" && current !== null) {
    throw new ActionError(
      "conflict",
      `${target} exists (sha256 ${current}); ifMatch "absent" allows only a new file — read it and retry with ifMatch: its sha256`,
      {
        path: "/ifMatch",
        details: { current },
      },
    );
  }
  if (ifMatch !== "absent" && current !== ifMatch) {
    const now = current === null ? "does not exist" : `has sha256 ${current}`;
    throw new ActionError("conflict", `${target} changed: it ${now}, not ${ifMatch}; read it again and redo the change`, {
      path: "/ifMatch",
      details: { current },
    });
  }
}

/** Replaces `target` with the complete temporary file, checking ifMatch with no other write of ours in between. */
export async function publish(temp: string, target: string, sha256: string, options: PublishOptions): Promise<Published> {
  return withPathLock(target, async () => {
    await checkIfMatch(target, options.ifMatch, options.signal);
    let mode = options.mode;
    if (mode === undefined) {
      try {
        const existing = await stat(target);
        mode = existing.isFile() ? existing.mode & 0o7777 : DEFAULT_MODE;
      } catch {
        mode = DEFAULT_MODE;
      }
    }
    try {
      const handle = await open(temp, constants.O_RDONLY);
      try {
        await handle.chmod(mode);
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (err) {
      throw fsError(err, target);
    }
    const st = await stat(target);
    return { path: target, size: st.size, sha256, mtime: st.mtime.toISOString() };
  });
}

/** Writes `data` to a temporary sibling, syncs it and publishes it; the temporary file never outlives a failure. */
export async function writeAtomic(target: string, data: Buffer, options: PublishOptions): Promise<Published> {
  // Checked before the bytes go to disk as well, so a doomed write fails fast; publish checks again.
  await checkIfMatch(target, options.ifMatch, options.signal);
  const { temp, handle } = await openTemp(target, options.parents);
  try {
    try {
      await handle.writeFile(data);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    return await publish(temp, target, options.sha256 ?? sha256Hex(data), options);
  } catch (err) {
    await rm(temp, { force: true });
    throw fsError(err, target);
  }
}

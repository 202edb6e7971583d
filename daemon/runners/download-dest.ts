import { link, lstat, rename, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { ActionError } from "../../protocol/errors.js";

/** Where a download goes, and how it is moved there without ever clobbering by accident. */

export interface Destination {
  dir: string;
  /** Set when `dest` names the file itself. */
  file?: string;
}

/** Decides whether `dest` is a directory to place into or the file path itself, refusing an existing file early. */
export async function planDestination(dest: string, overwrite: boolean): Promise<Destination> {
  const info = await stat(dest).catch(() => undefined);
  if (dest.endsWith("/") || info?.isDirectory()) {
    if (!info?.isDirectory())
      throw new ActionError("not_found", `directory ${dest} does not exist; pass parents: true to create it, or name a file`, {
        path: "/dest",
      });
    return { dir: dest };
  }
  const dir = dirname(dest);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    throw new ActionError("not_found", `directory ${dir} does not exist; pass parents: true to create it`, { path: "/dest" });
  }
  if (info && !overwrite)
    throw new ActionError("conflict", `${dest} already exists; pass overwrite: true to replace it`, { path: "/dest" });
  return { dir, file: dest };
}

/** Moves the finished temp file into place; without overwrite a hard link makes "only if absent" atomic. */
export async function installDownload(temp: string, path: string, overwrite: boolean): Promise<void> {
  if (overwrite) {
    if ((await lstat(path).catch(() => undefined))?.isDirectory()) {
      throw new ActionError("conflict", `${path} is a directory; it is never replaced by a download`, { path: "/dest" });
    }
    await rename(temp, path);
    return;
  }
  try {
    await link(temp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST")
      throw new ActionError("conflict", `${path} already exists; pass overwrite: true to replace it`, { path: "/dest" });
    throw err;
  }
  await unlink(temp);
}

import { ActionError } from "../../../protocol/errors.js";

/**
 * Turns an archive entry's stored name into a safe relative path inside the destination, or
 * refuses the whole archive. Backslashes count as separators (zip writers on Windows use them),
 * and the name must stay inside the destination both before and after `strip` is applied.
 */

/** An entry refused by the safety rules; `entry` is the name as stored in the archive. */
export function refuseEntry(entry: string, why: string, code: "invalid_request" | "limit_exceeded" = "invalid_request"): ActionError {
  return new ActionError(code, `archive entry ${JSON.stringify(entry)} refused: ${why}; nothing was extracted`, {
    path: "/archive",
    details: { entry },
  });
}

/** The archive as a whole is refused (damaged, truncated, too big) without one entry to blame. */
export function refuseArchive(why: string, code: "invalid_request" | "limit_exceeded" = "invalid_request"): ActionError {
  return new ActionError(code, `archive refused: ${why}; nothing was extracted`, { path: "/archive" });
}

/**
 * Returns the entry's normalised relative path ("a/b/c"), or null when `strip` consumes the whole
 * name (the entry is then skipped, as GNU tar does).
 */
export function safeEntryPath(name: string, strip: number): string | null {
  if (name.includes("\0")) throw refuseEntry(name, "its name contains a NUL byte");
  const unified = name.replace(/\\/g, "/");
  if (unified.startsWith("/") || /^[A-Za-z]:/.test(unified)) throw refuseEntry(name, "absolute path");
  const raw = unified.split("/").filter((c) => c !== "" && c !== ".");
  if (normalise(raw) === null) throw refuseEntry(name, "its path leaves the destination ('..')");
  if (raw.length <= strip) return null;
  const stripped = normalise(raw.slice(strip));
  if (stripped === null) throw refuseEntry(name, `its path leaves the destination ('..') after strip ${strip}`);
  if (stripped.length === 0) throw refuseEntry(name, "its path names the destination itself");
  return stripped.join("/");
}

/** Resolves `..` components; null when the path would climb above its root. */
function normalise(components: string[]): string[] | null {
  const out: string[] = [];
  for (const c of components) {
    if (c === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else {
      out.push(c);
    }
  }
  return out;
}

/** File-system failures name the entry being written (a file where a directory is needed, etc.). */
export function wrapWriteError(entry: string, err: unknown): unknown {
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === "string" && /^E[A-Z]+$/.test(e.code) && e.code !== "ENOSPC" && e.code !== "EDQUOT") {
    return refuseEntry(entry, `it cannot be written (${e.code}: it clashes with an earlier entry)`);
  }
  return err;
}

import { isUtf8 } from "node:buffer";
import { ActionError } from "../../protocol/errors.js";
import { openRegularFile } from "../util/regular-file.js";
import { sha256Hex } from "./hash.js";
import { writeAtomic, type Published } from "./publish.js";

/** Files larger than this are not edited in memory; use files.write. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;
const MAX_LINES_REPORTED = 20;

export interface Edit {
  old: string;
  new: string;
  count?: number;
}

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/** 1-based line numbers of offsets (ascending) in `text`. */
function lineNumbers(text: string, offsets: number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let position = 0;
  for (const offset of offsets) {
    for (;;) {
      const newline = text.indexOf("\n", position);
      if (newline === -1 || newline >= offset) break;
      line++;
      position = newline + 1;
    }
    lines.push(line);
  }
  return lines;
}

/**
 * Applies exact search/replace edits in order, each to the result of the one before. Every `old`
 * must occur exactly `count` times (default 1), else nothing is changed and the error says how
 * often and on which lines it occurs, so the agent can add context or set count.
 */
export function applyEdits(text: string, edits: readonly Edit[]): { text: string; replacements: number } {
  let replacements = 0;
  edits.forEach((edit, i) => {
    const want = edit.count ?? 1;
    const found = occurrences(text, edit.old);
    if (found.length !== want) {
      const lines = lineNumbers(text, found.slice(0, MAX_LINES_REPORTED));
      const where =
        found.length === 0
          ? "does not occur"
          : `occurs ${found.length} times (line${lines.length > 1 ? "s" : ""} ${lines.join(", ")}${found.length > lines.length ? ", …" : ""})`;
      const fix =
        found.length === 0
          ? "read the file again and copy the text exactly"
          : `add surrounding lines to make it unique, or set count: ${found.length}`;
      throw new ActionError("invalid_request", `edits[${i}].old ${where}, expected ${want}; nothing was changed — ${fix}`, {
        path: `/edits/${i}/old`,
        details: { occurrences: found.length, lines },
      });
    }
    const parts: string[] = [];
    let from = 0;
    for (const at of found) {
      parts.push(text.slice(from, at), edit.new);
      from = at + edit.old.length;
    }
    parts.push(text.slice(from));
    text = parts.join("");
    replacements += found.length;
  });
  return { text, replacements };
}

/** Reads a UTF-8 file, applies the edits, and publishes the result only if the file did not change meanwhile. */
export async function editFile(
  real: string,
  edits: readonly Edit[],
  ifMatch: string | undefined,
): Promise<Published & { replacements: number }> {
  const { handle, stats } = await openRegularFile(real);
  let bytes: Buffer;
  try {
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
  const current = sha256Hex(bytes);
  if (ifMatch !== undefined && ifMatch !== current) {
    throw new ActionError("conflict", `${real} changed: it has sha256 ${current}, not ${ifMatch}; read it again and redo the edit`, {
      path: "/ifMatch",
      details: { current },
    });
  }
  if (!isUtf8(bytes))
    throw new ActionError("invalid_request", `${real} is not valid UTF-8; files.edit works on text, use files.write`, { path: "/path" });
  const { text, replacements } = applyEdits(bytes.toString("utf8"), edits);
  // Conditional on what was read, so an edit never overwrites a change made in between.
  const published = await writeAtomic(real, Buffer.from(text, "utf8"), { ifMatch: current });
  return { ...published, replacements };
}

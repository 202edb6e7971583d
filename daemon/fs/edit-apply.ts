import { isUtf8 } from "node:buffer";
import { ActionError } from "../../protocol/errors.js";
import { sha256Hex } from "./hash.js";

/** Files larger than this are not edited in memory; use files.write. The edited result has the same bound. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;
const MAX_LINES_REPORTED = 20;

export interface Edit {
  old: string;
  new: string;
  count?: number;
}

/** The outcome of edits applied to a file's bytes: what to publish, and over which version. */
export interface EditOutcome {
  bytes: Uint8Array;
  /** SHA-256 of the bytes read (the version the publication is conditional on). */
  current: string;
  /** SHA-256 of the edited bytes. */
  sha256: string;
  replacements: number;
}

/** Start offsets of the non-overlapping occurrences of `needle`, left to right, at most `max`. */
function occurrences(text: string, needle: string, max = Number.POSITIVE_INFINITY): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1 && found.length < max; at = text.indexOf(needle, at + needle.length)) found.push(at);
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

function tooLarge(i: number): ActionError {
  return new ActionError(
    "limit_exceeded",
    `edits[${i}] would make the file larger than ${MAX_EDIT_BYTES} bytes, the most files.edit writes; use files.write`,
    { path: `/edits/${i}/new` },
  );
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
    let found = occurrences(text, edit.old, want + 1);
    if (found.length !== want) {
      found = occurrences(text, edit.old);
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
    // A UTF-16 unit is at least one byte of UTF-8: a result longer than the limit in units is over it in bytes.
    if (text.length + found.length * (edit.new.length - edit.old.length) > MAX_EDIT_BYTES) throw tooLarge(i);
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

/** Checks and edits a file's bytes (on the event loop or a worker thread: pure, and cost ∝ size × edits). */
export function computeEdit(bytes: Uint8Array, edits: readonly Edit[], ifMatch: string | undefined, real: string): EditOutcome {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const current = sha256Hex(buffer);
  if (ifMatch !== undefined && ifMatch !== current) {
    throw new ActionError("conflict", `${real} changed: it has sha256 ${current}, not ${ifMatch}; read it again and redo the edit`, {
      path: "/ifMatch",
      details: { current },
    });
  }
  if (!isUtf8(buffer))
    throw new ActionError("invalid_request", `${real} is not valid UTF-8; files.edit works on text, use files.write`, { path: "/path" });
  const { text, replacements } = applyEdits(buffer.toString("utf8"), edits);
  const edited = Buffer.from(text, "utf8");
  if (edited.length > MAX_EDIT_BYTES) throw tooLarge(edits.length - 1);
  return { bytes: edited, current, sha256: sha256Hex(edited), replacements };
}

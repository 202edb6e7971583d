/** Longest id string echoed from an oversized frame (the schema's own id limit is far below). */
const MAX_ID_CHARS = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Finds the top-level `"id"` of a frame too large to parse, so its `limit_exceeded` reply can be
 * matched to the request. One linear pass, no allocation but the id itself: strings are skipped
 * by their escapes, nested values by depth. Anything that does not look like a JSON object, or an
 * id that is not a string or number, yields undefined.
 */
export function findRequestId(frame: Buffer): string | number | undefined {
  let i = skipSpace(frame, 0);
  if (frame[i] !== 0x7b) return undefined; // {
  i++;
  for (;;) {
    i = skipSpace(frame, i);
    if (frame[i] !== QUOTE) return undefined;
    const keyStart = i;
    i = skipString(frame, i);
    if (i < 0) return undefined;
    const isId = i - keyStart === 4 && frame[keyStart + 1] === 0x69 && frame[keyStart + 2] === 0x64; // "id"
    i = skipSpace(frame, i);
    if (frame[i] !== 0x3a) return undefined; // :
    i = skipSpace(frame, i + 1);
    const valueStart = i;
    i = skipValue(frame, i);
    if (i < 0) return undefined;
    if (isId) return parseId(frame.subarray(valueStart, i));
    i = skipSpace(frame, i);
    if (frame[i] !== 0x2c) return undefined; // , — a closing } means there was no id
    i++;
  }
}

function parseId(raw: Buffer): string | number | undefined {
  if (raw.length > MAX_ID_CHARS + 2) return undefined;
  try {
    const value: unknown = JSON.parse(raw.toString("utf8"));
    return typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) ? value : undefined;
  } catch {
    return undefined;
  }
}

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return i;
}

/** From an opening quote to just past its closing quote; -1 when the string never ends. */
function skipString(b: Buffer, i: number): number {
  for (i++; i < b.length; i++) {
    if (b[i] === BACKSLASH) i++;
    else if (b[i] === QUOTE) return i + 1;
  }
  return -1;
}

/** Past one JSON value (string, object, array, number or literal); -1 when it never ends. */
function skipValue(b: Buffer, i: number): number {
  if (b[i] === QUOTE) return skipString(b, i);
  if (b[i] === 0x7b || b[i] === 0x5b) {
    let depth = 0;
    for (; i < b.length; i++) {
      const c = b[i];
      if (c === QUOTE) {
        i = skipString(b, i);
        if (i < 0) return -1;
        i--;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  const start = i;
  while (i < b.length && b[i] !== 0x2c && b[i] !== 0x7d && b[i] !== 0x20 && b[i] !== 0x0a && b[i] !== 0x0d && b[i] !== 0x09) i++;
  return i > start ? i : -1;
}

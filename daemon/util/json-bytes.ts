/**
 * JSON string escaping straight from UTF-8 bytes to UTF-8 bytes, with no V8 string in between:
 * decoding a chunk of job output, stringifying the event and encoding it again made three strings
 * per frame, and their garbage collection took a third of the JSON follower's time.
 */

/**
 * For each byte JSON.stringify escapes (quote, backslash, C0 controls): the letter after the
 * backslash, or UNICODE for \u00XX; 0 for bytes that go out as they are.
 */
const UNICODE = 0xff;
const ESCAPE = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) ESCAPE[b] = UNICODE;
for (const [b, letter] of [
  [0x08, "b"],
  [0x09, "t"],
  [0x0a, "n"],
  [0x0c, "f"],
  [0x0d, "r"],
  [0x22, '"'],
  [0x5c, "\\"],
] as const)
  ESCAPE[b] = letter.charCodeAt(0);
const HEX = "0123456789abcdef";
const NEEDS_ESCAPE = /[\x00-\x1f"\\]/;

/**
 * Writes the body of a JSON string (no quotes) for `src` into `dst` at `at`, exactly as
 * JSON.stringify(src.toString("utf8")) would for valid UTF-8 (which has no lone surrogates, the only
 * other thing it escapes). Returns the offset after the last byte written, or -1 when `dst` is too
 * small (the caller then takes the string path).
 */
export function writeJsonStringBody(src: Buffer, dst: Buffer, at: number): number {
  const end = dst.length;
  // The stretch before the first byte that needs escaping is copied natively: a regex over the
  // latin1 view finds it ~2x faster than this loop walks it (UTF-8's multi-byte sequences are all
  // >= 0x80, so they never match), and output without quotes, backslashes or controls is all stretch.
  const first = src.toString("latin1").search(NEEDS_ESCAPE);
  const clean = first < 0 ? src.length : first;
  if (at + clean > end) return -1;
  let out = at + src.copy(dst, at, 0, clean);
  for (let i = clean; i < src.length; i++) {
    const b = src[i]!;
    const code = ESCAPE[b]!;
    if (code === 0) {
      if (out >= end) return -1;
      dst[out++] = b;
    } else if (code !== UNICODE) {
      if (out + 2 > end) return -1;
      dst[out++] = 0x5c;
      dst[out++] = code;
    } else {
      if (out + 6 > end) return -1;
      out += dst.write(`\\u00${HEX[b >> 4]}${HEX[b & 15]}`, out, "latin1");
    }
  }
  return out;
}

import { isUtf8 } from "node:buffer";
import type { Encoding } from "../../protocol/common.js";

/**
 * Length of the longest prefix of `buf` that does not end inside a UTF-8 sequence, so a chunk
 * cut by a pipe read can still travel as text and its last bytes join the next chunk.
 */
export function completeUtf8Length(buf: Buffer): number {
  const n = buf.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const byte = buf[n - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** Encodes bytes for a JSON frame: text when they are valid UTF-8 on their own, else base64. */
export function encodeBytes(buf: Buffer): { data: string; encoding: Encoding } {
  if (isUtf8(buf)) return { data: buf.toString("utf8"), encoding: "utf8" };
  return { data: buf.toString("base64"), encoding: "base64" };
}

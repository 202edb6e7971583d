import type { OutputStream } from "../../protocol/common.js";
import type { OutputLog } from "./output-log.js";

const NEWLINE = 0x0a;

/**
 * Where a read of the last `bytes` bytes (of `only`, when given) should start so that it begins
 * at a line start: the last `bytes` bytes plus the one before them are read, and the read starts
 * after the first line break among them. A log (or kept tail) shorter than that starts where it
 * starts; a window holding no line break starts mid-line, exactly `bytes` from the end.
 */
export function tailLineStart(log: OutputLog, bytes: number, only?: OutputStream): number {
  const windowStart = log.tailStart(bytes + 1, only);
  const { pieces } = log.read(windowStart, bytes + 1, only);
  let read = 0;
  for (const piece of pieces) read += piece.data.length;
  if (read <= bytes) return windowStart; // the whole (kept) stream fits: it starts at its beginning
  for (const [i, piece] of pieces.entries()) {
    const at = piece.data.indexOf(NEWLINE);
    if (at < 0) continue;
    if (at + 1 < piece.data.length) return piece.offset + at + 1;
    // The break ends this piece: start at the stream's next byte, not at another stream's bytes between.
    return pieces[i + 1]?.offset ?? piece.offset + at + 1;
  }
  return log.tailStart(bytes, only);
}

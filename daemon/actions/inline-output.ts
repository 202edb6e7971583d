import { INLINE_HEAD_BYTES, INLINE_TAIL_BYTES, type InlineOutput } from "../../protocol/common.js";
import type { OutputLog } from "../jobs/output-log.js";
import { encodeBytes } from "../jobs/utf8.js";

function readAll(log: OutputLog, from: number, to: number): Buffer {
  const parts: Buffer[] = [];
  let pos = from;
  while (pos < to) {
    const { pieces, next } = log.read(pos, to - pos);
    for (const p of pieces) parts.push(p.data);
    if (next === pos) break;
    pos = next;
  }
  return Buffer.concat(parts);
}

/**
 * A finished job's output for a one-round-trip reply: all of it when short, otherwise the first
 * 16 KiB and the last 48 KiB, with the bytes in between counted (jobs.output reads them).
 */
export function inlineOutput(log: OutputLog): InlineOutput {
  const size = log.size;
  if (size <= INLINE_HEAD_BYTES + INLINE_TAIL_BYTES) {
    const bytes = readAll(log, 0, size);
    return { ...encodeBytes(bytes), bytes: size, omittedBytes: size - bytes.length };
  }
  const head = readAll(log, 0, INLINE_HEAD_BYTES);
  const tail = readAll(log, size - INLINE_TAIL_BYTES, size);
  return { ...encodeBytes(Buffer.concat([head, tail])), bytes: size, omittedBytes: size - head.length - tail.length };
}

import type { Readable } from "node:stream";
import { Decompress as ZstdDecompress } from "fzstd";
import { refuseArchive } from "./entry-path.js";
import { Pacer } from "./pacer.js";
import { ZstdWindowGuard } from "./zstd-guard.js";

/**
 * Decodes a zstd stream with fzstd, one frame header or block at a time, so that no single call
 * into the decoder does more than one block's work and the event loop gets a turn between them.
 *
 * fzstd's cost is not proportional to its input: every block moves the whole window (see
 * ZstdUnit), so a frame declaring a 128 MiB window and carrying its data as one-byte blocks costs
 * 128 MiB of memory traffic per four input bytes — an 80 KB archive is minutes of CPU. Real
 * encoders write full 128 KiB blocks (except a frame's last), which bounds the work per output
 * byte by window / 128 KiB ≤ 1024; a stream whose modelled work runs past twice that ratio of the
 * bytes it has produced, plus an allowance for starting a frame, is refused before the block that
 * would cross the line is decoded.
 */

/** Modelled bytes moved allowed per decompressed byte: twice what real encoders need at the 128 MiB window. */
export const WORK_PER_OUTPUT_BYTE = 2048;
/** Work allowed before any output: zeroing a 128 MiB window and its first blocks. */
export const WORK_ALLOWANCE = 512 * 1024 * 1024;

/** Yields the decompressed bytes of the zstd stream `source`; throws limit_exceeded per the rule above. */
export async function* zstdChunks(source: Readable): AsyncGenerator<Uint8Array> {
  const ready: Uint8Array[] = [];
  const guard = new ZstdWindowGuard();
  const pacer = new Pacer();
  let produced = 0;
  let work = 0;
  const decoder = new ZstdDecompress((chunk) => {
    if (chunk.length === 0) return;
    produced += chunk.length;
    ready.push(chunk);
  });
  for await (const chunk of source as AsyncIterable<Buffer>) {
    let from = 0;
    for (const unit of guard.scan(chunk)) {
      work += unit.work;
      if (work > WORK_PER_OUTPUT_BYTE * produced + WORK_ALLOWANCE) {
        throw refuseArchive(
          `its zstd blocks would cost ${work} bytes of decoding work for ${produced} bytes of output (more than ${WORK_PER_OUTPUT_BYTE} per byte): recompress it with zstd's defaults`,
          "limit_exceeded",
        );
      }
      decoder.push(chunk.subarray(from, unit.end));
      from = unit.end;
      while (ready.length > 0) yield ready.shift()!;
      await pacer.turn();
    }
    // The start of a block that completes in a later chunk: fzstd only holds it.
    if (from < chunk.length) decoder.push(chunk.subarray(from));
  }
  decoder.push(new Uint8Array(0), true);
  while (ready.length > 0) yield ready.shift()!;
}

import { Decompress as ZstdDecompress } from "fzstd";
import { refuseArchive } from "./entry-path.js";
import { ZstdWindowGuard } from "./zstd-guard.js";

/**
 * fzstd driven one frame header or block at a time, with a bound on its work.
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

export class ZstdBlockDecoder {
  private readonly guard = new ZstdWindowGuard();
  private readonly fzstd: ZstdDecompress;
  private produced = 0;
  private work = 0;

  /** `onData` receives decompressed bytes synchronously, in order; fzstd may reuse nothing it hands out. */
  constructor(onData: (chunk: Uint8Array) => void) {
    this.fzstd = new ZstdDecompress((chunk) => {
      if (chunk.length === 0) return;
      this.produced += chunk.length;
      onData(chunk);
    });
  }

  /** Decodes `chunk`, pausing (yielding) after each unit of work so the caller can pace; throws limit_exceeded per the rule above. */
  *feed(chunk: Uint8Array): Generator<void> {
    let from = 0;
    for (const unit of this.guard.scan(chunk)) {
      this.work += unit.work;
      if (this.work > WORK_PER_OUTPUT_BYTE * this.produced + WORK_ALLOWANCE) {
        throw refuseArchive(
          `its zstd blocks would cost ${this.work} bytes of decoding work for ${this.produced} bytes of output (more than ${WORK_PER_OUTPUT_BYTE} per byte): recompress it with zstd's defaults`,
          "limit_exceeded",
        );
      }
      this.fzstd.push(chunk.subarray(from, unit.end));
      from = unit.end;
      yield;
    }
    // The start of a unit that completes in a later chunk: fzstd only holds it.
    if (from < chunk.length) this.fzstd.push(chunk.subarray(from));
  }

  /** The input has ended: a truncated frame throws here. */
  end(): void {
    this.fzstd.push(new Uint8Array(0), true);
  }
}

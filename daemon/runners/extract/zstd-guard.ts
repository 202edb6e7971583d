import { refuseArchive } from "./entry-path.js";

/**
 * Reads the zstd frame and block headers of a compressed stream (without decoding anything) and
 * refuses a frame whose window is larger than the limit. fzstd allocates the declared window up
 * front and moves it on every block, so a hostile header announcing a 2 GiB window would cost
 * gigabytes of memory and seconds of blocked event loop per block; zstd's own decoder refuses
 * windows over 128 MiB by default for the same reason.
 */

/** zstd's default decoder limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27). */
export const MAX_ZSTD_WINDOW = 128 * 1024 * 1024;

const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

/** zstd's largest block (Block_Maximum_Size); fzstd allocates this much output per compressed block. */
const BLOCK_MAX = 128 * 1024;
/** Fixed cost of one block or frame in fzstd (calls, tables, small allocations), in bytes-moved equivalents. */
const UNIT_OVERHEAD = 1024;

/**
 * A stretch of compressed input ending where fzstd completes one piece of work (a frame header or
 * a block), and that work in bytes moved. fzstd's streaming decoder allocates and zeroes the whole
 * window for each frame, and after every block shifts the whole window left by the block's size
 * (copyWithin) and appends the block; so a block costs about window + block bytes, whatever its
 * size. `end` is an offset into the chunk passed to scan().
 */
export interface ZstdUnit {
  end: number;
  work: number;
}

/** Feed every compressed byte, in order, to `scan` before the decoder sees it. */
export class ZstdWindowGuard {
  private held = Buffer.alloc(0);
  private skip = 0;
  private inFrame = false;
  private hasChecksum = false;
  private window = 0;
  /** Work of the unit whose bytes are still being skipped. */
  private pending = 0;

  constructor(private readonly maxWindow = MAX_ZSTD_WINDOW) {}

  /** Checks the headers in `chunk` and returns the units that complete inside it, in order. */
  scan(chunk: Uint8Array): ZstdUnit[] {
    const units: ZstdUnit[] = [];
    let data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // Offset in `chunk` of data[0]: negative while re-reading held bytes.
    let at = -this.held.length;
    for (;;) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, data.length);
        this.skip -= n;
        data = data.subarray(n);
        at += n;
        if (this.skip > 0) break;
      }
      if (this.pending > 0) {
        units.push({ end: at, work: this.pending });
        this.pending = 0;
      }
      const used = this.inFrame ? this.blockHeader(data) : this.frameHeader(data);
      if (used === 0) break;
      data = data.subarray(used);
      at += used;
    }
    this.held = Buffer.from(data);
    return units;
  }

  /** Consumes a frame (or skippable frame) header; 0 when more bytes are needed. */
  private frameHeader(b: Buffer): number {
    if (b.length < 8) return 0;
    const magic = b.readUInt32LE(0);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      this.skip = b.readUInt32LE(4);
      return 8;
    }
    if (magic !== FRAME_MAGIC) throw refuseArchive("its zstd stream is damaged (no frame where one must start)");
    const fhd = b[4]!;
    const singleSegment = (fhd >> 5) & 1;
    const fcsSize = [singleSegment ? 1 : 0, 2, 4, 8][fhd >> 6]!;
    const dictSize = [0, 1, 2, 4][fhd & 3]!;
    const headerSize = 5 + (singleSegment ? 0 : 1) + dictSize + fcsSize;
    if (b.length < headerSize) return 0;
    let window: number;
    if (singleSegment) {
      const at = 5 + dictSize;
      window =
        fcsSize === 1
          ? b[at]!
          : fcsSize === 2
            ? b.readUInt16LE(at) + 256
            : fcsSize === 4
              ? b.readUInt32LE(at)
              : b.readUInt32LE(at) + b.readUInt32LE(at + 4) * 2 ** 32;
    } else {
      const base = 2 ** (10 + (b[5]! >> 3));
      window = base + (base / 8) * (b[5]! & 7);
    }
    if (window > this.maxWindow) {
      throw refuseArchive(`its zstd window is ${window} bytes, more than the ${this.maxWindow} allowed`, "limit_exceeded");
    }
    this.hasChecksum = ((fhd >> 2) & 1) === 1;
    this.inFrame = true;
    this.window = window;
    this.pending = window + UNIT_OVERHEAD;
    return headerSize;
  }

  /** Consumes a block header and schedules its content to be skipped; 0 when more bytes are needed. */
  private blockHeader(b: Buffer): number {
    if (b.length < 3) return 0;
    const h = b[0]! | (b[1]! << 8) | (b[2]! << 16);
    const type = (h >> 1) & 3;
    if (type === 3) throw refuseArchive("its zstd stream is damaged (reserved block type)");
    const size = h >> 3;
    this.skip = type === 1 ? 1 : size;
    this.pending = this.window + (type === 2 ? Math.min(BLOCK_MAX, this.window) : size) + UNIT_OVERHEAD;
    if (h & 1) {
      this.inFrame = false;
      if (this.hasChecksum) this.skip += 4;
    }
    return 3;
  }
}

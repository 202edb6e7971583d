import { refuseArchive, refuseEntry } from "./entry-path.js";

/**
 * Counts what an extraction really produces — bytes as they come out of the decompressor and
 * entries as they are met — and stops it the moment a limit is passed. Header sizes are never
 * trusted: only bytes actually seen count.
 */

export interface ExtractLimits {
  /** Largest total of extracted file bytes (default 1 GiB). */
  maxBytes: number;
  /** Most entries of any kind (default 100,000). */
  maxEntries: number;
}

export const DEFAULT_LIMITS: ExtractLimits = { maxBytes: 1024 ** 3, maxEntries: 100_000 };

/** Per-entry allowance for tar headers and padding when the whole inflated stream is counted. */
const STREAM_OVERHEAD_PER_ENTRY = 8 * 1024;
const STREAM_OVERHEAD_BASE = 1024 * 1024;

/** The running totals of one extraction. */
export class ExtractionBudget {
  bytes = 0;
  entries = 0;
  private streamBytes = 0;

  constructor(readonly limits: ExtractLimits) {}

  /** One more entry named `name`; throws limit_exceeded past maxEntries. */
  addEntry(name: string): void {
    if (++this.entries > this.limits.maxEntries) {
      throw refuseEntry(name, `the archive has more than ${this.limits.maxEntries} entries`, "limit_exceeded");
    }
  }

  /** `n` more file bytes written for `name`; throws limit_exceeded past maxBytes. */
  addBytes(name: string, n: number): void {
    this.bytes += n;
    if (this.bytes > this.limits.maxBytes) {
      throw refuseEntry(name, `the archive expands past ${this.limits.maxBytes} bytes`, "limit_exceeded");
    }
  }

  /**
   * `n` more bytes out of the decompressor (headers, padding and data). Bounds archives that
   * inflate into endless padding or empty blocks without ever producing file bytes.
   */
  addStreamBytes(n: number): void {
    this.streamBytes += n;
    const allowed = this.limits.maxBytes + STREAM_OVERHEAD_BASE + STREAM_OVERHEAD_PER_ENTRY * this.entries;
    if (this.streamBytes > allowed) {
      throw refuseArchive(`its decompressed stream expands past ${allowed} bytes`, "limit_exceeded");
    }
  }
}

import { statSync } from "node:fs";

/**
 * The files of a log directory: segment `seg-<start>.log` holds the log's bytes from offset
 * `start`, and `seg-<start>.idx` which stream each came from, as RECORD_BYTES records.
 */
export function segmentName(start: number): string {
  return `seg-${String(start).padStart(15, "0")}.log`;
}

export function indexName(start: number): string {
  return `seg-${String(start).padStart(15, "0")}.idx`;
}

/** An index record: offset f64, length f64, stream u8, padding. */
export const RECORD_BYTES = 24;

/** A file's size; 0 when it is not there. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

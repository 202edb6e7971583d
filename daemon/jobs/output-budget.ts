import { statfsSync } from "node:fs";

const DEFAULT_SHARE = 0.25;
const DEFAULT_MAX = 16 * 1024 ** 3;

/**
 * The output all kept jobs may hold together when none is configured: a quarter of the volume
 * holding `dir`, at most 16 GiB, and never less than one job's cap (one job's output always fits).
 */
export function defaultOutputBudget(dir: string, capBytes: number): number {
  let volume = DEFAULT_MAX / DEFAULT_SHARE;
  try {
    const fs = statfsSync(dir);
    volume = fs.blocks * fs.bsize;
  } catch {
    // No statfs (an exotic filesystem): the cap alone bounds it.
  }
  return Math.max(capBytes, Math.min(DEFAULT_MAX, Math.floor(volume * DEFAULT_SHARE)));
}

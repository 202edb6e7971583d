import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type GcFunction = (options?: { type?: "minor" | "major"; execution?: "sync" | "async" }) => void;

/** Short-lived bytes (job output read from pipes) between two young-generation collections. */
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

let gc: GcFunction | null | undefined;
let bytesSinceCollection = 0;

/**
 * Runs a young-generation collection. Each pipe read of a job's output is a fresh 64 KiB buffer
 * that dies at once, but V8 only notices when its young space fills with *objects* (a few hundred
 * bytes per buffer) or external memory passes 64 MB — so a job printing fast made the daemon hold
 * tens of MB of dead buffers. A scavenge every few MiB of output keeps that flat for ~0.2 ms each.
 */
export function collectYoungGarbage(): void {
  gcFunction()?.({ type: "minor" });
}

/** A full collection, for memory that lives in the old generation and is let go while the daemon is idle. */
export function collectAllGarbage(): void {
  gcFunction()?.({ type: "major" });
}

function gcFunction(): GcFunction | null {
  if (gc === undefined) {
    try {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as GcFunction;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/** Counts buffers that die at once (job output); every COLLECT_EVERY_BYTES of them, collects the young generation. */
export function noteShortLivedBytes(bytes: number): void {
  bytesSinceCollection += bytes;
  if (bytesSinceCollection < COLLECT_EVERY_BYTES) return;
  bytesSinceCollection = 0;
  collectYoungGarbage();
}

import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Gives the event loop a turn once a slice of time has passed since the last one. Extraction is a
 * chain of promises and synchronous writes that, left alone, only ever yields microtasks: a
 * hundred thousand small entries, or one decoder burst, would then hold heartbeats, cancels and
 * every other client for seconds. Yielding on elapsed time (not per entry) keeps the cost of the
 * check negligible on fast work and bounds each stall however slow one step is.
 */

/** Longest stretch of work between two turns of the event loop. */
export const SLICE_MS = 10;

export class Pacer {
  private last = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Resolves at once inside the slice; after it, on the next turn of the event loop (I/O and timers run first). */
  async turn(): Promise<void> {
    if (performance.now() - this.last < this.sliceMs) return;
    await nextTurn();
    this.last = performance.now();
  }
}

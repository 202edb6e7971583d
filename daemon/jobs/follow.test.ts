import { describe, expect, it } from "vitest";
import { binaryFrame, textOutputFrame } from "./follow.js";

const header = { event: "job.output" as const, job: "j0test", stream: "stdout" as const, offset: 0 };

/**
 * What a frame keeps alive is its whole backing store, while a connection's send window counts only
 * the frame's bytes: a short live piece must not hold a pooled (1 MiB or 128.5 KiB) buffer.
 */
describe("output frames", () => {
  it("put a short binary piece in a buffer of about its size, and a full read in a pooled frame", () => {
    const small = binaryFrame(header, 100, (frame, at) => frame.fill(97, at, at + 100) && 100);
    expect(small.frame.length).toBeLessThan(200);
    expect(small.frame.buffer.byteLength).toBeLessThanOrEqual(8192); // Node's shared pool for small Buffers
    small.release();
    const full = binaryFrame(header, 1024 * 1024, () => 1024 * 1024);
    expect(full.frame.buffer.byteLength).toBeGreaterThanOrEqual(8 * 1024 * 1024); // a piece of the pool's slab
    full.release();
  });

  it("put a short JSON piece in a buffer of about its size", () => {
    const text = textOutputFrame(header, Buffer.from("one line\n"))!;
    expect(JSON.parse(text.frame.toString()).data).toBe("one line\n");
    expect(text.frame.buffer.byteLength).toBeLessThanOrEqual(8192);
    text.release();
  });
});

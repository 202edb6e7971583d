import { describe, expect, it } from "vitest";
import { InputQueue } from "./input-queue.js";

describe("InputQueue", () => {
  it("keeps one piece a timed-out request left in flight, and writes nothing more until the job takes it", async () => {
    const pieces: Buffer[] = [];
    let take: (() => void) | undefined;
    let reading = false;
    // A job that does not read: each write is taken only when the test says so.
    const queue = new InputQueue(
      "j1",
      (piece) =>
        new Promise<void>((resolve) => {
          pieces.push(piece);
          if (reading) resolve();
          else take = resolve;
        }),
      () => {},
    );
    const data = Buffer.alloc(100 * 1024, "x");
    for (let i = 0; i < 5; i++) {
      await expect(queue.write(data, false, 20)).rejects.toMatchObject({ code: "conflict", details: { written: 0 } });
    }
    // Five timed-out requests handed the job one piece, not five.
    expect(pieces).toHaveLength(1);
    reading = true;
    take?.();
    await expect(queue.write(Buffer.from("y"), false, 1000)).resolves.toBe(1);
    expect(pieces).toHaveLength(2);
  });
});

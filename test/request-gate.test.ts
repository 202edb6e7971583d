import { describe, expect, it } from "vitest";
import { type GateHooks, RequestGate } from "../daemon/server/request-gate.js";

/** Hooks that record what the gate asked of its connection; the gate itself is the real one. */
function recordingHooks(start: (frame: Buffer) => Promise<void> | undefined = () => undefined) {
  const calls: string[] = [];
  const hooks: GateHooks = {
    hasRoom: () => true,
    start: (frame) => {
      calls.push(`start ${frame.toString()}`);
      return start(frame);
    },
    pause: () => calls.push("pause"),
    resume: () => calls.push("resume"),
    guard: (fn) => fn(),
    onBehind: () => {},
  };
  return { calls, hooks };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("RequestGate", () => {
  it("pauses the socket as soon as a frame of a synchronous burst has to wait, not a turn later", async () => {
    const { calls, hooks } = recordingHooks();
    const gate = new RequestGate(hooks);
    // ws emits every message of one read chunk synchronously, as here.
    for (const name of ["a", "b", "c"]) gate.push(Buffer.from(name));
    expect(calls).toEqual(["start a", "pause"]);
    expect(gate.paused).toBe(true);
    await nextTurn();
    await nextTurn();
    expect(calls).toEqual(["start a", "pause", "start b", "start c", "resume"]);
    expect(gate.paused).toBe(false);
  });

  it("a request whose handling rejects frees its place without an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const { calls, hooks } = recordingHooks((frame) =>
        frame.toString() === "bad" ? Promise.reject(new Error("handler failed")) : undefined,
      );
      const gate = new RequestGate(hooks);
      gate.push(Buffer.from("bad"));
      await nextTurn();
      await nextTurn();
      gate.push(Buffer.from("next"));
      await nextTurn();
      expect(calls).toContain("start next");
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

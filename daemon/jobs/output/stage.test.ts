import { describe, expect, it } from "vitest";
import { Stage, STAGE_MS } from "./stage.js";

describe("Stage", () => {
  it("a read that reaches staged bytes must write them first; one that ends before them need not", () => {
    const stage = new Stage(() => {});
    expect(stage.reaches(100, 100)).toBe(false); // nothing staged
    stage.take(Buffer.from("abcdef"), 0, 6); // the log's last 6 bytes, of 100
    expect(stage.reaches(94, 100)).toBe(false);
    expect(stage.reaches(95, 100)).toBe(true);
    const written: string[] = [];
    stage.drain(
      (b, o, l) => {
        written.push(b.toString("utf8", o, o + l));
        return l;
      },
      () => {},
    );
    expect(written).toEqual(["abcdef"]);
    expect(stage.size).toBe(0);
    expect(stage.reaches(100, 100)).toBe(false);
  });

  it("a write that fails leaves the stage empty and says how many bytes the kernel did not take", () => {
    const stage = new Stage(() => {});
    stage.take(Buffer.alloc(10, 1), 0, 10);
    let lost = -1;
    let calls = 0;
    const write = (_b: Buffer, _o: number, _l: number): number => {
      if (calls++ === 0) return 4;
      throw Object.assign(new Error("no space"), { code: "ENOSPC" });
    };
    expect(() => stage.drain(write, (n) => (lost = n))).toThrow("no space");
    expect(lost).toBe(6);
    expect(stage.size).toBe(0);
  });

  it("writes what waits STAGE_MS after the first byte, when nothing read it", async () => {
    let due = 0;
    const stage = new Stage(() => due++);
    stage.take(Buffer.from("x"), 0, 1);
    stage.take(Buffer.from("y"), 0, 1); // one timer for both
    await new Promise((r) => setTimeout(r, STAGE_MS * 4));
    expect(due).toBe(1);
    stage.drain(
      (_b, _o, l) => l,
      () => {},
    );
  });
});

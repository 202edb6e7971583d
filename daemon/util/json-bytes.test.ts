import { describe, expect, it } from "vitest";
import { writeJsonStringBody } from "./json-bytes.js";

const asJson = (src: Buffer, room = src.length * 6): string | undefined => {
  const dst = Buffer.alloc(room);
  const end = writeJsonStringBody(src, dst, 0);
  return end < 0 ? undefined : `"${dst.subarray(0, end).toString("utf8")}"`;
};

describe("writeJsonStringBody", () => {
  it("escapes every byte as JSON.stringify escapes the decoded text", () => {
    const ascii = Buffer.from(Array.from({ length: 128 }, (_, b) => b));
    const text = Buffer.from('line one\nline "two"\t\\ tab\r\n\u0000\u001f\u007f é 漢字 😀 \u2028', "utf8");
    for (const src of [ascii, text, Buffer.alloc(0)]) expect(asJson(src)).toBe(JSON.stringify(src.toString("utf8")));
  });

  it("copies the stretch before the first escape as it is, whatever it holds", () => {
    const clean = Buffer.from(`${"é漢😀 plain text ".repeat(500)}`, "utf8");
    const mixed = Buffer.concat([clean, Buffer.from('then "quotes"\n and \u0001 controls', "utf8")]);
    for (const src of [clean, mixed]) expect(asJson(src)).toBe(JSON.stringify(src.toString("utf8")));
    expect(asJson(clean, clean.length - 1)).toBeUndefined();
  });

  it("says when the target is too small instead of writing past it", () => {
    expect(asJson(Buffer.from("abc"), 2)).toBeUndefined();
    expect(asJson(Buffer.from("a\n"), 2)).toBeUndefined();
    expect(asJson(Buffer.from("\u0001"), 5)).toBeUndefined();
    expect(asJson(Buffer.from("\u0001"), 6)).toBe('"\\u0001"');
  });
});

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { scratch, sha256 } from "./helpers.js";

const SOURCE = ["function a() {", "  return 1;", "}", "", "function b() {", "  return 1;", "}", ""].join("\n");

describe("files.edit through the real daemon", () => {
  const ctx = useDaemon();

  it("replaces a unique old string exactly and atomically, returning the new sha256", async () => {
    const path = join(scratch(), "src.js");
    writeFileSync(path, SOURCE, { mode: 0o640 });
    const result = await ctx.client.ok("files.edit", {
      path,
      edits: [{ old: "function b() {\n  return 1;", new: "function b() {\n  return $1 + '$&';" }],
    });
    const after = readFileSync(path, "utf8");
    expect(after).toBe(SOURCE.replace("function b() {\n  return 1;", () => "function b() {\n  return $1 + '$&';"));
    expect(result).toMatchObject({ path, replacements: 1, sha256: sha256(after), size: Buffer.byteLength(after) });
  });

  it("changes nothing when old is ambiguous and reports both line numbers", async () => {
    const path = join(scratch(), "src.js");
    writeFileSync(path, SOURCE);
    const reply = await ctx.client.call("files.edit", {
      path,
      edits: [
        { old: "function a", new: "function z" },
        { old: "  return 1;", new: "  return 2;" },
      ],
    });
    expect(reply.error).toMatchObject({ code: "invalid_request", path: "/edits/1/old", details: { occurrences: 2, lines: [2, 6] } });
    expect(reply.error.message).toContain("lines 2, 6");
    expect(readFileSync(path, "utf8")).toBe(SOURCE); // the first edit was not written either
  });

  it("replaces every occurrence when count says how many, and reports a missing old", async () => {
    const path = join(scratch(), "src.js");
    writeFileSync(path, SOURCE);
    const ok = await ctx.client.ok("files.edit", { path, edits: [{ old: "return 1", new: "return 3", count: 2 }] });
    expect(ok.replacements).toBe(2);
    expect(readFileSync(path, "utf8")).toBe(SOURCE.replaceAll("return 1", "return 3"));
    const missing = await ctx.client.call("files.edit", { path, edits: [{ old: "return 1", new: "x" }] });
    expect(missing.error).toMatchObject({ code: "invalid_request", details: { occurrences: 0, lines: [] } });
  });

  it("honours ifMatch and refuses binary files", async () => {
    const dir = scratch();
    const path = join(dir, "src.js");
    writeFileSync(path, SOURCE);
    const stale = await ctx.client.call("files.edit", {
      path,
      ifMatch: sha256("other"),
      edits: [{ old: "function a", new: "function z" }],
    });
    expect(stale.error).toMatchObject({ code: "conflict", details: { current: sha256(SOURCE) } });
    await ctx.client.ok("files.edit", { path, ifMatch: sha256(SOURCE), edits: [{ old: "function a", new: "function z" }] });
    writeFileSync(join(dir, "b.bin"), Buffer.from([0xff, 0x00, 0x41]));
    expect((await ctx.client.call("files.edit", { path: join(dir, "b.bin"), edits: [{ old: "A", new: "B" }] })).error).toMatchObject({
      code: "invalid_request",
    });
  });
});

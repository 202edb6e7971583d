import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { scratch } from "./helpers.js";

// Issue 21, items 12 and 16: the rules that keep writes in the named directory and the daemon's
// own files unreadable hold for a symlinked parent directory and for a hard link.
describe("file actions through linked parents and hard links", () => {
  const ctx = useDaemon();

  it("files.write and files.edit never write outside through a symlinked parent directory", async () => {
    const root = scratch();
    const repo = join(root, "repo");
    const outside = join(root, "outside");
    mkdirSync(repo);
    mkdirSync(outside);
    writeFileSync(join(outside, "README.md"), "keep");
    symlinkSync("../outside", join(repo, "docs"));
    const write = await ctx.client.call("files.write", { path: join(repo, "docs", "README.md"), data: "evil" });
    expect(write.error).toMatchObject({ code: "invalid_request", path: "/path" });
    expect(write.error.message).toContain("outside");
    const fresh = await ctx.client.call("files.write", { path: join(repo, "docs", "new", "x.md"), data: "evil", parents: true });
    expect(fresh.error).toMatchObject({ code: "invalid_request" });
    const edit = await ctx.client.call("files.edit", { path: join(repo, "docs", "README.md"), edits: [{ old: "keep", new: "evil" }] });
    expect(edit.error).toMatchObject({ code: "invalid_request", path: "/path" });
    expect(readFileSync(join(outside, "README.md"), "utf8")).toBe("keep");
    expect(existsSync(join(outside, "new"))).toBe(false);
    // A parent link that stays inside the directory holding it is written through, like a file link.
    mkdirSync(join(repo, "documentation"));
    symlinkSync("documentation", join(repo, "doc"));
    const ok = await ctx.client.ok("files.write", { path: join(repo, "doc", "README.md"), data: "fine" });
    expect(ok.path).toBe(join(repo, "documentation", "README.md"));
    expect(readFileSync(join(repo, "documentation", "README.md"), "utf8")).toBe("fine");
  });

  it("refuses a hard link to the token file to files.read, files.edit and files.search", async () => {
    const token = join(ctx.daemon.dirs.config, "token");
    const dir = scratch();
    const link = join(dir, "innocent.txt");
    linkSync(token, link);
    const read = await ctx.client.call("files.read", { path: link });
    expect(read.error).toMatchObject({ code: "forbidden", path: "/path" });
    expect(JSON.stringify(read)).not.toContain(ctx.daemon.token);
    const edit = await ctx.client.call("files.edit", { path: link, edits: [{ old: ctx.daemon.token.slice(0, 8), new: "x" }] });
    expect(edit.error).toMatchObject({ code: "forbidden" });
    const found = await ctx.client.ok("files.search", { path: dir, pattern: ctx.daemon.token.slice(0, 12) });
    expect(found.matches).toEqual([]);
    expect(readFileSync(token, "utf8").trim()).toBe(ctx.daemon.token);
    // An ordinary hard-linked file is still read.
    writeFileSync(join(dir, "a.txt"), "shared");
    linkSync(join(dir, "a.txt"), join(dir, "b.txt"));
    expect((await ctx.client.ok("files.read", { path: join(dir, "b.txt") })).data).toBe("shared");
  });
});

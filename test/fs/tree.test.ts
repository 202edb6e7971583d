import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { scratch } from "./helpers.js";

const hasGit = toolAvailable("git");

/** A small repository: tracked sources, an ignored node_modules/ and .env, an untracked file. */
function repo(): string {
  const dir = scratch("hotline-fs-repo-");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  writeFileSync(join(dir, ".gitignore"), "node_modules/\n.env\n*.log\n");
  mkdirSync(join(dir, "src/nested"), { recursive: true });
  writeFileSync(join(dir, "src/main.ts"), "export const hello = 1;\n");
  writeFileSync(join(dir, "src/nested/deep.ts"), "// hello deep\n");
  writeFileSync(join(dir, "README.md"), "# hello\n");
  mkdirSync(join(dir, "node_modules/pkg"), { recursive: true });
  writeFileSync(join(dir, "node_modules/pkg/index.js"), "hello\n");
  writeFileSync(join(dir, ".env"), "SECRET=hello\n");
  writeFileSync(join(dir, "src/debug.log"), "hello\n");
  git("add", ".gitignore", "src/main.ts", "README.md");
  writeFileSync(join(dir, "notes.txt"), "untracked hello\n");
  return dir;
}

describe("files.list, stat, mkdir, move, remove through the real daemon", () => {
  const ctx = useDaemon();

  it.skipIf(!hasGit)("lists with gitignore: true omitting node_modules/ and .env, sorted in tree order", async () => {
    const dir = repo();
    const { entries, more } = await ctx.client.ok("files.list", { path: dir, depth: 3, hidden: true, gitignore: true });
    const names = entries.map((e: { path: string }) => e.path.slice(dir.length + 1));
    expect(names).toEqual([".gitignore", "README.md", "notes.txt", "src", "src/main.ts", "src/nested", "src/nested/deep.ts"]);
    expect(more).toBe(false);
    const all = await ctx.client.ok("files.list", { path: dir, hidden: true });
    expect(all.entries.map((e: { name: string }) => e.name)).toEqual([
      ".env",
      ".git",
      ".gitignore",
      "README.md",
      "node_modules",
      "notes.txt",
      "src",
    ]);
    const plain = await ctx.client.ok("files.list", { path: dir });
    expect(plain.entries.map((e: { name: string }) => e.name)).toEqual(["README.md", "node_modules", "notes.txt", "src"]);
  });

  it("filters by glob, reports entry fields and links without following them, and stops at limit with more", async () => {
    const dir = scratch();
    mkdirSync(join(dir, "a/b"), { recursive: true });
    writeFileSync(join(dir, "a/x.ts"), "12345", { mode: 0o600 });
    writeFileSync(join(dir, "a/b/y.ts"), "");
    writeFileSync(join(dir, "a/b/z.md"), "");
    symlinkSync("a", join(dir, "link"));
    const ts = await ctx.client.ok("files.list", { path: dir, depth: 5, glob: "*.ts" });
    expect(ts.entries.map((e: { path: string }) => e.path)).toEqual([join(dir, "a/b/y.ts"), join(dir, "a/x.ts")]);
    expect(ts.entries[1]).toMatchObject({ name: "x.ts", type: "file", size: 5, mode: "0600" });
    const top = await ctx.client.ok("files.list", { path: dir });
    expect(top.entries.find((e: { name: string }) => e.name === "link")).toMatchObject({ type: "symlink", target: "a" });
    const limited = await ctx.client.ok("files.list", { path: dir, depth: 5, limit: 2 });
    expect(limited.entries).toHaveLength(2);
    expect(limited.more).toBe(true);
    expect((await ctx.client.call("files.list", { path: join(dir, "a/x.ts") })).error).toMatchObject({ code: "invalid_request" });
    expect((await ctx.client.call("files.list", { path: join(dir, "nope") })).error).toMatchObject({ code: "not_found" });
  });

  it("stats an entry (a link itself, with its target)", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "f"), "abc");
    symlinkSync("f", join(dir, "l"));
    expect(await ctx.client.ok("files.stat", { path: join(dir, "f") })).toMatchObject({
      name: "f",
      path: join(dir, "f"),
      type: "file",
      size: 3,
    });
    expect(await ctx.client.ok("files.stat", { path: join(dir, "l") })).toMatchObject({ type: "symlink", target: "f" });
    expect((await ctx.client.call("files.stat", { path: join(dir, "none") })).error).toMatchObject({ code: "not_found", path: "/path" });
  });

  it("mkdir: parents only when asked, an existing directory is fine, a file in the way is a conflict", async () => {
    const dir = scratch();
    expect((await ctx.client.call("files.mkdir", { path: join(dir, "p/q") })).error).toMatchObject({ code: "not_found" });
    expect(await ctx.client.ok("files.mkdir", { path: join(dir, "p/q"), parents: true })).toEqual({
      path: join(dir, "p/q"),
      created: true,
    });
    expect(await ctx.client.ok("files.mkdir", { path: join(dir, "p/q") })).toEqual({ path: join(dir, "p/q"), created: false });
    writeFileSync(join(dir, "file"), "");
    expect((await ctx.client.call("files.mkdir", { path: join(dir, "file") })).error).toMatchObject({ code: "conflict" });
  });

  it("move: refuses an existing destination without overwrite, moves a link itself", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "a"), "A");
    writeFileSync(join(dir, "b"), "B");
    expect((await ctx.client.call("files.move", { from: join(dir, "a"), to: join(dir, "b") })).error).toMatchObject({
      code: "conflict",
      path: "/to",
    });
    await ctx.client.ok("files.move", { from: join(dir, "a"), to: join(dir, "b"), overwrite: true });
    expect(readFileSync(join(dir, "b"), "utf8")).toBe("A");
    expect(existsSync(join(dir, "a"))).toBe(false);
    symlinkSync("b", join(dir, "l"));
    await ctx.client.ok("files.move", { from: join(dir, "l"), to: join(dir, "l2") });
    expect(readlinkSync(join(dir, "l2"))).toBe("b");
    expect(readFileSync(join(dir, "b"), "utf8")).toBe("A");
    mkdirSync(join(dir, "d"));
    expect((await ctx.client.call("files.move", { from: join(dir, "d"), to: join(dir, "d/inner") })).error).toMatchObject({
      code: "invalid_request",
    });
    mkdirSync(join(ctx.daemon.dirs.root, "workspace"), { recursive: true });
    const ontoRoot = await ctx.client.call("files.move", {
      from: join(dir, "d"),
      to: join(ctx.daemon.dirs.root, "workspace"),
      overwrite: true,
    });
    expect(ontoRoot.error).toMatchObject({ code: "invalid_request", path: "/to" });
    expect(existsSync(join(dir, "d"))).toBe(true);
  });

  it("remove: a link (never its target), a directory only with recursive, never /, home or the workspace root", async () => {
    const dir = scratch();
    const outside = scratch();
    writeFileSync(join(outside, "keep"), "k");
    symlinkSync(outside, join(dir, "l"));
    expect(await ctx.client.ok("files.remove", { path: join(dir, "l") })).toEqual({ path: join(dir, "l"), type: "symlink" });
    expect(readFileSync(join(outside, "keep"), "utf8")).toBe("k");
    mkdirSync(join(dir, "t/u"), { recursive: true });
    expect((await ctx.client.call("files.remove", { path: join(dir, "t") })).error).toMatchObject({ code: "conflict", path: "/recursive" });
    await ctx.client.ok("files.remove", { path: join(dir, "t"), recursive: true });
    expect(existsSync(join(dir, "t"))).toBe(false);
    mkdirSync(join(ctx.daemon.dirs.root, "workspace"), { recursive: true });
    for (const root of ["/", ctx.daemon.dirs.home, join(ctx.daemon.dirs.root, "workspace")]) {
      expect((await ctx.client.call("files.remove", { path: root, recursive: true })).error, root).toMatchObject({
        code: "invalid_request",
      });
    }
    expect(lstatSync(join(ctx.daemon.dirs.root, "workspace")).isDirectory()).toBe(true);
  });
});

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { scratch } from "./helpers.js";

const hasGit = toolAvailable("git");

describe.skipIf(!hasGit)("files.search through the real daemon", () => {
  const ctx = useDaemon();

  it("searches a repository's tracked and untracked files, never ignored ones, with line and column", async () => {
    const dir = scratch();
    execFileSync("git", ["init", "-q"], { cwd: dir });
    writeFileSync(join(dir, ".gitignore"), "node_modules/\n.env\n");
    mkdirSync(join(dir, "src"));
    mkdirSync(join(dir, "node_modules"));
    writeFileSync(join(dir, "src/a.ts"), "const x = 1;\nconst needle = 2; // needle\n");
    writeFileSync(join(dir, "notes.md"), "a needle here\n");
    writeFileSync(join(dir, "node_modules/dep.js"), "needle\n");
    writeFileSync(join(dir, ".env"), "NEEDLE=needle\n");
    execFileSync("git", ["add", "src/a.ts"], { cwd: dir });
    const { matches, more, timedOut } = await ctx.client.ok("files.search", { path: dir, pattern: "needle" });
    expect(matches).toEqual([
      { path: join(dir, "notes.md"), line: 1, column: 3, text: "a needle here" },
      { path: join(dir, "src/a.ts"), line: 2, column: 7, text: "const needle = 2; // needle" },
    ]);
    expect({ more, timedOut }).toEqual({ more: false, timedOut: false });
    const ts = await ctx.client.ok("files.search", { path: dir, pattern: "ne+dle = [0-9]", regex: true, glob: "*.ts" });
    expect(ts.matches.map((m: { path: string }) => m.path)).toEqual([join(dir, "src/a.ts")]);
    const bad = await ctx.client.call("files.search", { path: dir, pattern: "a(b", regex: true });
    expect(bad.error).toMatchObject({ code: "invalid_request", path: "/pattern" });
  });

  it("searches a plain directory and a single file, treats the pattern literally by default, and stops at maxResults", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "f.txt"), `${Array.from({ length: 50 }, (_, i) => `line ${i} a.b*c`).join("\n")}\n`);
    writeFileSync(join(dir, "g.bin"), Buffer.from([0, 1, 2, 0x61, 0x2e, 0x62, 0x2a, 0x63]));
    execFileSync("mkfifo", [join(dir, "pipe")]); // never opened: a search must not wait for a writer
    const literal = await ctx.client.ok("files.search", { path: dir, pattern: "a.b*c", maxResults: 10 });
    expect(literal.matches).toHaveLength(10);
    expect(literal.more).toBe(true);
    expect(literal.matches[0]).toEqual({ path: join(dir, "f.txt"), line: 1, column: 8, text: "line 0 a.b*c" });
    const one = await ctx.client.ok("files.search", { path: join(dir, "f.txt"), pattern: "line 49 " });
    expect(one.matches).toEqual([{ path: join(dir, "f.txt"), line: 50, column: 1, text: "line 49 a.b*c" }]);
    expect((await ctx.client.call("files.search", { path: join(dir, "none"), pattern: "x" })).error).toMatchObject({ code: "not_found" });
  });
});

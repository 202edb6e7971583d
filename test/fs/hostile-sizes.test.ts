import { closeSync, ftruncateSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useDaemon, type Frame } from "../helpers/daemon.js";
import { bigScratch, manyFiles, rssMiB } from "./helpers.js";

// Issue 21: for each files.* action that takes a path, a size, a count or a body, the largest
// input its schema (and the 1 MiB frame) allows, and a huge tree or file; each checked against
// another client's slowest state.info round trip and the daemon's resident set while it runs.
// Bounds: 1 s (the budget is 100 ms; this shared 2-core machine adds ~300 ms of noise, and these
// inputs cost seconds to minutes before) and 200 MiB over the RSS before the case.
const STALL_BOUND_MS = 1000;
const RSS_BOUND_MIB = 200;
const ENTRIES = 100_000;
const HUGE = 64 * 1024 ** 3;
const FRAME_DATA = 1024 * 1024 - 4096; // the largest data one default frame carries, with room for the rest

describe("files.* with hostile sizes", () => {
  const ctx = useDaemon();
  let root = "";
  let flat = "";
  let sparse = "";

  beforeAll(async () => {
    root = bigScratch("hotline-fs-hostile-", afterAll);
    flat = join(root, "flat");
    mkdirSync(flat);
    await manyFiles(flat, ENTRIES);
    sparse = join(root, "sparse.bin");
    const fd = openSync(sparse, "w");
    ftruncateSync(fd, HUGE);
    closeSync(fd);
  }, 600_000);

  /** Runs `action` while another client sends state.info; returns its reply, the slowest round trip and the peak RSS growth. */
  async function measured(action: string, params: Record<string, unknown>): Promise<Frame> {
    const observer = await ctx.daemon.client();
    const pid = ctx.daemon.proc.pid!;
    const before = rssMiB(pid);
    let peak = before;
    let worst = 0;
    let finished = false;
    const reply = ctx.client.call(action, params, 300_000).finally(() => (finished = true));
    while (!finished) {
      const t = performance.now();
      await observer.ok("state.info", {}, 120_000);
      worst = Math.max(worst, performance.now() - t);
      peak = Math.max(peak, rssMiB(pid));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await observer.close();
    const grown = peak - before;
    console.log(`${action} ${JSON.stringify(params).slice(0, 100)}: worst state.info ${Math.round(worst)} ms, RSS +${grown} MiB`);
    expect(worst, `${action}: slowest state.info`).toBeLessThan(STALL_BOUND_MS);
    expect(grown, `${action}: RSS growth`).toBeLessThan(RSS_BOUND_MIB);
    return reply;
  }

  it("files.read: the largest slice, and the last bytes, of a 64 GiB file", async () => {
    const head = await measured("files.read", { path: sparse, limit: 4 * 1024 * 1024, encoding: "base64" });
    expect(head.result).toMatchObject({ next: 4 * 1024 * 1024, eof: false });
    const tail = await measured("files.read", { path: sparse, offset: HUGE - 4 * 1024 * 1024, limit: 4 * 1024 * 1024, binary: true });
    expect(tail.result).toMatchObject({ eof: true, encoding: "binary" });
  }, 300_000);

  it("files.write: the largest single frame, and a write with ifMatch over a 512 MiB file", async () => {
    const path = join(root, "written.bin");
    const data = Buffer.alloc((FRAME_DATA / 4) * 3, 7).toString("base64");
    const ok = await measured("files.write", { path, data, encoding: "base64" });
    expect(ok.result).toMatchObject({ done: true, size: (FRAME_DATA / 4) * 3 });
    // ifMatch against a huge file needs its hash; it must not hold the daemon (hashed in a child).
    const copy = join(root, "sparse-copy.bin");
    const fd = openSync(copy, "w");
    ftruncateSync(fd, 512 * 1024 ** 2);
    closeSync(fd);
    const refused = await measured("files.write", { path: copy, data: "x", ifMatch: "0".repeat(64) });
    expect(refused.error).toMatchObject({ code: "conflict", path: "/ifMatch" });
  }, 600_000);

  it("files.edit: the most edits on the largest file, and a count × new that would explode the file", async () => {
    const path = join(root, "edit.txt");
    writeFileSync(path, `${"y".repeat(1023)}\n`.repeat(16 * 1024 - 1));
    const edits = Array.from({ length: 1000 }, (_, i) => ({ old: `absent-${i}`, new: "z" }));
    const missing = await measured("files.edit", { path, edits });
    expect(missing.error).toMatchObject({ code: "invalid_request", path: "/edits/0/old" });
    const bomb = join(root, "bomb.txt");
    writeFileSync(bomb, "a\n".repeat(100_000));
    const exploded = await measured("files.edit", { path: bomb, edits: [{ old: "a", new: "b".repeat(1000 * 1000), count: 100_000 }] });
    expect(exploded.error).toMatchObject({ code: "limit_exceeded" });
  }, 600_000);

  it("files.list: the largest limit and depth over a 100,000-entry directory", async () => {
    const listed = await measured("files.list", { path: root, limit: 10_000, depth: 32 });
    expect(listed.result.entries).toHaveLength(10_000);
    expect(listed.result.more).toBe(true);
    const globbed = await measured("files.list", { path: flat, limit: 10_000, glob: "*9999" });
    expect(globbed.result.entries.map((e: { name: string }) => e.name)).toEqual([
      "f0009999",
      "f0019999",
      "f0029999",
      "f0039999",
      "f0049999",
      "f0059999",
      "f0069999",
      "f0079999",
      "f0089999",
      "f0099999",
    ]);
  }, 300_000);

  it("files.search: the longest pattern and most results over a 100,000-entry directory", async () => {
    const found = await measured("files.search", { path: flat, pattern: "q".repeat(4096), maxResults: 10_000 });
    expect(found.result.matches).toEqual([]);
  }, 300_000);

  it("files.stat, mkdir, move: a deep path, and a 100,000-entry tree", async () => {
    // The longest path the kernel takes (4,095 bytes; the schema allows 4,096): about 2,000 levels.
    // At 1,000 levels a recursive realpath of the missing part once resumed every level in one turn.
    const deep = join(root, ...Array.from({ length: Math.floor((4095 - root.length) / 2) }, () => "d"));
    expect(deep.length).toBeGreaterThan(4090);
    expect((await measured("files.mkdir", { path: deep, parents: true })).result).toMatchObject({ created: true });
    expect((await measured("files.stat", { path: deep })).result).toMatchObject({ type: "directory" });
    const moved = join(root, "moved");
    expect((await measured("files.move", { from: flat, to: moved })).result).toEqual({ from: flat, to: moved });
    await measured("files.move", { from: moved, to: flat });
  }, 300_000);

  it("files.watch: a 100,000-entry directory, and a tree past a watch's directory cap", async () => {
    const watched = await measured("files.watch", { path: flat });
    await ctx.client.ok("files.unwatch", { watch: watched.result.watch });
    const wide = join(root, "wide");
    for (let i = 0; i < 4100; i++) mkdirSync(join(wide, `d${i}`), { recursive: true });
    const refused = await measured("files.watch", { path: wide, recursive: true });
    expect(refused.error).toMatchObject({ code: "limit_exceeded", path: "/path" });
  }, 300_000);

  it("files.remove: a deep path and a 100,000-entry tree", async () => {
    expect((await measured("files.remove", { path: join(root, "d"), recursive: true })).result).toMatchObject({ type: "directory" });
    expect((await measured("files.remove", { path: flat, recursive: true })).result).toEqual({ path: flat, type: "directory" });
  }, 300_000);
});

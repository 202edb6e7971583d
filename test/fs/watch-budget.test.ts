import { execFile } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { bigScratch } from "./helpers.js";

/** inotify watches a process holds: the `inotify wd:` lines of its inotify descriptors' fdinfo. */
function inotifyWatches(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== "anon_inode:inotify") continue;
      count += readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("inotify wd:")).length;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

const TREES = 16;
const DIRS_PER_TREE = 4000; // the tree's own directory and 3,999 below it: under the 4,096 a watch may cover

// Issue 21, item 7: recursive watches across all connections hold at most a quarter of the
// user's inotify watches, and a watch that cannot be placed whole is refused, never ok.
describe("files.watch within the daemon's share of inotify watches", () => {
  const ctx = useDaemon();

  it("refuses with limit_exceeded past a quarter of max_user_watches, across connections, and places every directory of an ok watch", async () => {
    const max = Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8").trim());
    const share = Math.floor(max / 4);
    // Enough trees to pass the share (at least one over it), at most the 16 watches of one connection.
    const trees = Math.min(TREES, Math.floor(share / DIRS_PER_TREE) + 2);
    const root = bigScratch();
    const script = `import os,sys\nr=sys.argv[1]\nfor t in range(int(sys.argv[2])):\n  for d in range(${DIRS_PER_TREE - 1}): os.makedirs(f"{r}/t{t:02d}/d{d:04d}")`;
    await promisify(execFile)("python3", ["-c", script, root, String(trees)], { timeout: 600_000 });
    const pid = ctx.daemon.proc.pid!;
    const baseline = inotifyWatches(pid);
    const owner = await ctx.daemon.client(); // its watches end with it, below
    const results: Array<{ tree: string; watch?: string; code?: string }> = [];
    for (let t = 0; t < trees; t++) {
      const tree = join(root, `t${String(t).padStart(2, "0")}`);
      const reply = await owner.call("files.watch", { path: tree, recursive: true }, 120_000);
      results.push({ tree, watch: reply.result?.watch, code: reply.error?.code });
    }
    const ok = results.filter((r) => r.watch);
    const refused = results.filter((r) => !r.watch);
    const held = inotifyWatches(pid) - baseline;
    console.log(`max_user_watches ${max}: ${ok.length} watches ok, ${refused.length} refused, ${held} inotify watches held`);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.code).toBe("limit_exceeded");
    expect(held).toBeLessThanOrEqual(share);
    // Every ok watch placed all its directories, a refused one none (its partial placement undone).
    expect(held).toBe(ok.length * DIRS_PER_TREE);
    // The share is the daemon's, not a connection's.
    const other = await ctx.daemon.client();
    const elsewhere = await other.call("files.watch", { path: refused[0]!.tree, recursive: true }, 120_000);
    expect(elsewhere.error).toMatchObject({ code: "limit_exceeded", path: "/path" });
    // An ok watch sees a change in its last directory.
    const last = ok.at(-1)!;
    const file = join(last.tree, `d${String(DIRS_PER_TREE - 2).padStart(4, "0")}`, "new.txt");
    const event = owner.waitFor((f) => f.event === "fs.change" && f.watch === last.watch && f.path === file, 10_000, "the create");
    writeFileSync(file, "x");
    await event;
    // Stopping a watch gives its share back.
    await owner.ok("files.unwatch", { watch: ok[0]!.watch });
    await other.ok("files.watch", { path: refused[0]!.tree, recursive: true }, 120_000);
    // Connections that go take their watches along: every inotify watch is removed (in slices, so
    // the ~48,000 closes are no stall for the suite's watchdog check after this test).
    await owner.close();
    await other.close();
    for (const started = Date.now(); inotifyWatches(pid) > baseline && Date.now() - started < 60_000; ) await sleep(100);
    expect(inotifyWatches(pid)).toBe(baseline);
  }, 600_000);
});

import { describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { git, tempWorkspace, writeFile } from "./helpers.js";

describe.skipIf(!toolAvailable("git"))("concurrent workspace operations (real git)", () => {
  it("two tasks of one repo committing at once: both commits land, the repo stays sound, one lock wait is observed", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    const a = await ws.createTask({ task: "a" });
    const b = await ws.createTask({ task: "b" });
    writeFile(a.path, "a.txt", "a\n");
    writeFile(b.path, "b.txt", "b\n");
    const before = ws.locks.stats("default");
    const [ca, cb] = await Promise.all([ws.commit({ task: "a", message: "from a" }), ws.commit({ task: "b", message: "from b" })]);
    const after = ws.locks.stats("default");
    expect(ca.committed && cb.committed).toBe(true);
    expect(after.acquired - before.acquired).toBe(2);
    expect(after.waited - before.waited).toBe(1);
    expect([ca.lockWaitMs, cb.lockWaitMs].filter((ms) => ms > 0)).toHaveLength(1);
    expect(git(repo.path, "rev-parse", "task-a").trim()).toBe(ca.commit);
    expect(git(repo.path, "rev-parse", "task-b").trim()).toBe(cb.commit);
    expect(git(repo.path, "show", "task-a:a.txt")).toBe("a\n");
    expect(git(repo.path, "show", "task-b:b.txt")).toBe("b\n");
    expect(git(repo.path, "fsck", "--strict", "--no-progress")).toBe("");
  });

  it("eight tasks committing and merging at once all land in order-independent history", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    const ids = Array.from({ length: 8 }, (_, i) => `t${i}`);
    for (const id of ids) writeFile((await ws.createTask({ task: id })).path, `${id}.txt`, id);
    const commits = await Promise.all(ids.map((id) => ws.commit({ task: id, message: id })));
    expect(commits.every((c) => c.committed)).toBe(true);
    const merges = await Promise.all(ids.map((id) => ws.merge({ task: id })));
    expect(merges.every((m) => m.merged)).toBe(true);
    const tree = git(repo.path, "ls-tree", "--name-only", "HEAD").trim().split("\n").sort();
    expect(tree).toEqual(ids.map((id) => `${id}.txt`).sort());
    expect(git(repo.path, "status", "--porcelain")).toBe("");
    expect(git(repo.path, "fsck", "--strict", "--no-progress")).toBe("");
  });

  it("two repos proceed in parallel: work on one is not held up by the other's lock", async () => {
    const { ws } = tempWorkspace();
    await ws.addRepo({ repo: "r1" });
    await ws.addRepo({ repo: "r2" });
    const t1 = await ws.createTask({ task: "t1", repo: "r1" });
    const t2 = await ws.createTask({ task: "t2", repo: "r2" });
    writeFile(t1.path, "1.txt", "1");
    writeFile(t2.path, "2.txt", "2");
    // r1's lock is held for the whole of r2's commit: if repos shared a lock this would deadlock.
    const heldR1 = await ws.locks.acquire("r1", { purpose: "test holds r1" });
    const c2 = await ws.commit({ task: "t2", message: "two" });
    expect(c2).toMatchObject({ committed: true, lockWaitMs: 0 });
    await heldR1.release();
    writeFile(t2.path, "2b.txt", "2b");
    const [c1, c2b] = await Promise.all([ws.commit({ task: "t1", message: "one" }), ws.commit({ task: "t2", message: "two b" })]);
    expect(c1.committed && c2b.committed).toBe(true);
    expect(ws.locks.stats("r1").waited).toBe(0);
    expect(ws.locks.stats("r2").waited).toBe(0);
  });
});

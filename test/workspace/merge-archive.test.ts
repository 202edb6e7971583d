import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { git, rejectsWith, tempWorkspace, writeFile } from "./helpers.js";

describe.skipIf(!toolAvailable("git"))("merge, snapshot and bundle (real git)", () => {
  it("tasks.merge merges a task branch into the clone's branch with a merge commit", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    const t = await ws.createTask({ task: "t1" });
    writeFile(t.path, "feature.txt", "done\n");
    const c = await ws.commit({ task: "t1", message: "feature" });
    const m = await ws.merge({ task: "t1" });
    expect(m).toMatchObject({ task: "t1", branch: "task-t1", into: "main", merged: true });
    expect(git(repo.path, "rev-parse", "HEAD").trim()).toBe(m.commit);
    expect(git(repo.path, "log", "-1", "--format=%P").trim().split(" ")).toEqual([repo.commit, c.commit]);
    expect(fs.readFileSync(path.join(repo.path, "feature.txt"), "utf8")).toBe("done\n");
    expect(await ws.merge({ task: "t1" })).toMatchObject({ merged: false, commit: m.commit });
    await rejectsWith(ws.merge({ task: "t1", into: "task-t1" }), "invalid_request");
    await rejectsWith(ws.merge({ task: "t1", into: "nope" }), "not_found");
  });

  it("a conflicting merge is aborted, reports the files, and leaves the clone clean and unchanged", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    const a = await ws.createTask({ task: "a" });
    const b = await ws.createTask({ task: "b" });
    writeFile(a.path, "shared.txt", "from a\n");
    writeFile(b.path, "shared.txt", "from b\n");
    writeFile(b.path, "only-b.txt", "b\n");
    await ws.commit({ task: "a", message: "a" });
    await ws.commit({ task: "b", message: "b" });
    fs.writeFileSync(path.join(repo.path, ".env"), "SECRET=1\n"); // untracked, ignored: must survive
    const first = await ws.merge({ task: "a" });
    const err = await rejectsWith(ws.merge({ task: "b" }), "conflict");
    expect(err.details).toMatchObject({ files: ["shared.txt"], into: "main", branch: "task-b" });
    expect(git(repo.path, "rev-parse", "HEAD").trim()).toBe(first.commit);
    expect(git(repo.path, "status", "--porcelain")).toBe("");
    expect(fs.existsSync(path.join(repo.path, ".git/MERGE_HEAD"))).toBe(false);
    expect(fs.existsSync(path.join(repo.path, "only-b.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(repo.path, "shared.txt"), "utf8")).toBe("from a\n");
    expect(fs.readFileSync(path.join(repo.path, ".env"), "utf8")).toBe("SECRET=1\n");
  });

  it("merges into a branch no worktree has checked out via a temporary worktree, and refuses a dirty target", async () => {
    const { ws, root } = tempWorkspace();
    const repo = await ws.addRepo({});
    git(repo.path, "branch", "release");
    const t = await ws.createTask({ task: "t1" });
    writeFile(t.path, "x.txt", "x\n");
    await ws.commit({ task: "t1", message: "x" });
    const m = await ws.merge({ task: "t1", into: "release" });
    expect(m).toMatchObject({ into: "release", merged: true });
    expect(git(repo.path, "rev-parse", "release").trim()).toBe(m.commit);
    expect(git(repo.path, "rev-parse", "HEAD").trim()).toBe(repo.commit); // main untouched
    expect(git(repo.path, "worktree", "list", "--porcelain")).not.toContain(".merge-");
    expect(fs.readdirSync(path.join(root, "project/repos/default")).filter((n) => n.startsWith(".merge-"))).toEqual([]);
    writeFile(repo.path, "dirty.txt", "tracked\n");
    git(repo.path, "add", "dirty.txt");
    await rejectsWith(ws.merge({ task: "t1" }), "conflict");
  });

  it("repos.snapshot writes a tar.gz of the tree at a ref into the state dir, without the .env", async () => {
    const { ws, stateDir } = tempWorkspace();
    const repo = await ws.addRepo({ repo: "api" });
    writeFile(repo.path, "src/index.js", "1\n");
    writeFile(repo.path, "README.md", "r\n");
    git(repo.path, "add", "-A");
    git(repo.path, "commit", "-q", "-m", "tree");
    await ws.writeSecrets({ repo: "api", values: { S: "x" } });
    const snap = await ws.snapshot({ repo: "api" });
    expect(path.dirname(snap.path)).toBe(path.join(stateDir, "snapshots"));
    expect(snap.bytes).toBe(fs.statSync(snap.path).size);
    const listing = execFileSync("tar", ["-tzf", snap.path], { encoding: "utf8" }).trim().split("\n").sort();
    expect(listing).toEqual(["README.md", "src/", "src/index.js"]);
    const old = await ws.snapshot({ repo: "api", ref: "HEAD~1" });
    expect(old.commit).toBe(repo.commit);
    expect(execFileSync("tar", ["-tzf", old.path], { encoding: "utf8" }).trim()).toBe("");
    await rejectsWith(ws.snapshot({ repo: "api", ref: "nope" }), "not_found");
    await rejectsWith(ws.snapshot({ repo: "api", ref: "--output=/tmp/pwn" }), "invalid_request");
    await rejectsWith(ws.snapshot({ repo: "missing" }), "not_found");
    expect(fs.readdirSync(path.join(stateDir, "snapshots")).filter((n) => n.endsWith(".partial"))).toEqual([]);
  });

  it("a cancelled snapshot throws and leaves no partial file", async () => {
    const { ws, stateDir } = tempWorkspace();
    await ws.addRepo({});
    const ac = new AbortController();
    ac.abort(new Error("cancelled by test"));
    await expect(ws.snapshot({}, { signal: ac.signal })).rejects.toThrow(/cancelled by test/);
    expect(fs.existsSync(path.join(stateDir, "snapshots")) ? fs.readdirSync(path.join(stateDir, "snapshots")) : []).toEqual([]);
  });

  it("repos.bundle can be cloned back and carries every task branch", async () => {
    const { ws, tmp, stateDir } = tempWorkspace();
    await ws.addRepo({});
    for (const id of ["one", "two"]) {
      const t = await ws.createTask({ task: id });
      writeFile(t.path, `${id}.txt`, id);
      await ws.commit({ task: id, message: id });
    }
    await ws.createTask({ task: "three" }); // no commits yet: still a branch
    const b = await ws.bundle({ repo: "default" });
    expect(path.dirname(b.path)).toBe(path.join(stateDir, "bundles"));
    expect(b.refs).toEqual(
      expect.arrayContaining(["refs/heads/main", "refs/heads/task-one", "refs/heads/task-two", "refs/heads/task-three"]),
    );
    const restored = path.join(tmp, "restored");
    git(tmp, "clone", "-q", b.path, restored);
    const branches = git(restored, "branch", "-r", "--format=%(refname:short)").trim().split("\n");
    expect(branches).toEqual(expect.arrayContaining(["origin/main", "origin/task-one", "origin/task-two", "origin/task-three"]));
    expect(git(restored, "show", "origin/task-two:two.txt")).toBe("two");
    expect(git(restored, "fsck", "--no-progress")).toBe("");
  });
});

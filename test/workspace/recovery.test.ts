import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { git, rejectsWith, tempWorkspace, writeFile } from "./helpers.js";

describe.skipIf(!toolAvailable("git"))("recovering from interrupted operations (real git)", () => {
  it("a task directory without task.json (crash during tasks.create) is hidden, named in errors, and cleared by force", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    const t = await ws.createTask({ task: "half" });
    fs.rmSync(path.join(path.dirname(t.path), "task.json"));
    expect(await ws.listTasks()).toEqual([]);
    expect((await rejectsWith(ws.createTask({ task: "half" }), "conflict")).message).toMatch(/interrupted tasks.create/);
    expect((await rejectsWith(ws.removeTask({ task: "half" }), "not_found")).message).toMatch(/"force": true/);
    expect(await ws.removeTask({ task: "half", force: true })).toMatchObject({ repo: "default", branchDeleted: true });
    expect(git(repo.path, "worktree", "list", "--porcelain")).not.toContain("half");
    expect((await ws.createTask({ task: "half" })).branch).toBe("task-half");
  });

  it("a crashed clone's partial directory and a crashed merge's temporary worktree are swept under the lock", async () => {
    const { ws, root } = tempWorkspace();
    const leftover = path.join(root, "project/repos/api/.repo.partial-dead");
    writeFile(leftover, "junk", "x");
    await ws.addRepo({ repo: "api" });
    expect(fs.existsSync(leftover)).toBe(false);

    const clone = path.join(root, "project/repos/api/repo");
    git(clone, "branch", "release");
    const crashed = path.join(root, "project/repos/api/.merge-dead");
    git(clone, "worktree", "add", "-q", crashed, "release"); // as a crash mid-merge would leave it
    const t = await ws.createTask({ task: "t1", repo: "api" });
    writeFile(t.path, "x.txt", "x");
    await ws.commit({ task: "t1", message: "x" });
    expect(await ws.merge({ task: "t1", into: "release" })).toMatchObject({ merged: true });
    expect(fs.existsSync(crashed)).toBe(false);
    expect(git(clone, "worktree", "list", "--porcelain")).not.toContain(".merge-");
  });

  it("a git lock file held by another git process is a conflict naming the file, not an internal error", async () => {
    const { ws } = tempWorkspace();
    await ws.addRepo({});
    const t = await ws.createTask({ task: "t1" });
    const indexLock = path.resolve(t.path, git(t.path, "rev-parse", "--git-path", "index.lock").trim());
    fs.writeFileSync(indexLock, "");
    writeFile(t.path, "a.txt", "a");
    const err = await rejectsWith(ws.commit({ task: "t1", message: "a" }), "conflict");
    expect(err.details).toMatchObject({ lockFile: indexLock });
    fs.rmSync(indexLock);
    expect((await ws.commit({ task: "t1", message: "a" })).committed).toBe(true);
  });
});

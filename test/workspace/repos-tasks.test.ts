import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { git, rejectsWith, tempWorkspace, writeFile } from "./helpers.js";

describe.skipIf(!toolAvailable("git"))("repositories and tasks (real git)", () => {
  it("repos.add without a source inits main with an initial commit and pins /.env in info/exclude", async () => {
    const { ws, root } = tempWorkspace();
    const added = await ws.addRepo({});
    expect(added).toMatchObject({ repo: "default", source: "init", branch: "main", initialCommit: true, origin: null });
    expect(added.path).toBe(path.join(root, "project/repos/default/repo"));
    expect(git(added.path, "rev-list", "--count", "HEAD").trim()).toBe("1");
    expect(fs.readFileSync(path.join(added.path, ".git/info/exclude"), "utf8")).toMatch(/^\/\.env$/m);
    expect(fs.existsSync(path.join(added.path, ".gitignore"))).toBe(false);
    expect(fs.readdirSync(path.dirname(added.path)).filter((n) => n.includes("partial"))).toEqual([]);
    await rejectsWith(ws.addRepo({}), "conflict");
    expect((await ws.listRepos()).map((r) => r.repo)).toEqual(["default"]);
  });

  it("repos.add clones from a local path and a file:// url, keeping the source's history", async () => {
    const { ws, tmp } = tempWorkspace();
    const src = path.join(tmp, "src");
    fs.mkdirSync(src);
    git(src, "init", "-q", "-b", "trunk");
    writeFile(src, "README.md", "hello\n");
    git(src, "add", "README.md");
    git(src, "commit", "-q", "-m", "first");
    const viaPath = await ws.addRepo({ repo: "api", path: src });
    expect(viaPath).toMatchObject({ repo: "api", source: "clone", branch: "trunk", initialCommit: false, origin: src });
    expect(fs.readFileSync(path.join(viaPath.path, "README.md"), "utf8")).toBe("hello\n");
    const viaUrl = await ws.addRepo({ repo: "web", url: `file://${src}` });
    expect(viaUrl.commit).toBe(viaPath.commit);
    expect(fs.readFileSync(path.join(viaUrl.path, ".git/info/exclude"), "utf8")).toMatch(/^\/\.env$/m);
    expect((await ws.listRepos()).map((r) => r.repo)).toEqual(["api", "web"]);
  });

  it("repos.add from a missing source fails cleanly and leaves no directory behind", async () => {
    const { ws, root } = tempWorkspace();
    await rejectsWith(ws.addRepo({ repo: "gone", path: "/nonexistent/repo" }), "not_found");
    expect(fs.readdirSync(path.join(root, "project/repos/gone")).filter((n) => n !== ".lock")).toEqual([]);
    expect(await ws.listRepos()).toEqual([]);
    await rejectsWith(ws.addRepo({ repo: "x", url: "https://u:secret@example.com/r.git" }), "invalid_request");
    await rejectsWith(ws.addRepo({ repo: "../x" }), "invalid_request");
  });

  it("an empty remote gets an initial commit so tasks can branch", async () => {
    const { ws, tmp } = tempWorkspace();
    const bare = path.join(tmp, "empty.git");
    git(tmp, "init", "-q", "--bare", "-b", "main", bare);
    const added = await ws.addRepo({ repo: "e", url: `file://${bare}` });
    expect(added.initialCommit).toBe(true);
    const task = await ws.createTask({ task: "t1", repo: "e" });
    expect(task.commit).toBe(added.commit);
  });

  it("tasks.create makes a worktree on task-<id> off the clone's HEAD or a base; conflicts and not_found are clear", async () => {
    const { ws, root } = tempWorkspace();
    const repo = await ws.addRepo({});
    writeFile(repo.path, "a.txt", "1\n");
    git(repo.path, "add", "a.txt");
    git(repo.path, "commit", "-q", "-m", "a");
    const head = git(repo.path, "rev-parse", "HEAD").trim();
    const t1 = await ws.createTask({ task: "t1" });
    expect(t1).toMatchObject({
      task: "t1",
      repo: "default",
      branch: "task-t1",
      base: "HEAD",
      baseCommit: head,
      path: path.join(root, "tasks/t1/repo"),
    });
    expect(git(t1.path, "symbolic-ref", "--short", "HEAD").trim()).toBe("task-t1");
    expect(fs.readFileSync(path.join(t1.path, "a.txt"), "utf8")).toBe("1\n");
    const t2 = await ws.createTask({ task: "t2", base: "HEAD~1" });
    expect(t2.baseCommit).toBe(repo.commit);
    expect(fs.existsSync(path.join(t2.path, "a.txt"))).toBe(false);

    await rejectsWith(ws.createTask({ task: "t1" }), "conflict");
    expect((await rejectsWith(ws.createTask({ task: "t3", repo: "nope" }), "not_found")).path).toBe("/repo");
    expect((await rejectsWith(ws.createTask({ task: "t3", base: "no-such-branch" }), "not_found")).path).toBe("/base");
    expect((await rejectsWith(ws.createTask({ task: "t3", base: "--output=/tmp/x" }), "invalid_request")).path).toBe("/base");
    for (const hostile of ["../escape", ".git", "-b", "a/b"]) await rejectsWith(ws.createTask({ task: hostile }), "invalid_request");
    expect(fs.readdirSync(path.join(root, "tasks")).sort()).toEqual(["t1", "t2"]);
    expect((await ws.listTasks()).map((t) => [t.task, t.branch])).toEqual([
      ["t1", "task-t1"],
      ["t2", "task-t2"],
    ]);
    expect(await ws.listTasks({ repo: "other" })).toEqual([]);
  });

  it("tasks.remove refuses uncommitted work without force, keeps an unmerged branch, and force discards both", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    const t = await ws.createTask({ task: "t1" });
    writeFile(t.path, "work.txt", "wip\n");
    await rejectsWith(ws.removeTask({ task: "t1" }), "conflict");
    expect(fs.existsSync(path.join(t.path, "work.txt"))).toBe(true);
    await ws.commit({ task: "t1", message: "wip" });
    const kept = await ws.removeTask({ task: "t1" });
    expect(kept).toMatchObject({ branchDeleted: false, branch: "task-t1" });
    expect(fs.existsSync(t.path)).toBe(false);
    expect(git(repo.path, "branch", "--list", "task-t1").trim()).toBe("task-t1");
    await rejectsWith(ws.createTask({ task: "t1" }), "conflict");
    await rejectsWith(ws.removeTask({ task: "t1" }), "not_found");

    const t2 = await ws.createTask({ task: "t2" });
    writeFile(t2.path, "x.txt", "x\n");
    fs.writeFileSync(path.join(t2.path, ".env"), "A=1\n");
    expect(await ws.removeTask({ task: "t2", force: true })).toMatchObject({ branchDeleted: true });
    expect(git(repo.path, "branch", "--list", "task-t2").trim()).toBe("");
    const t3 = await ws.createTask({ task: "t3" });
    expect(await ws.removeTask({ task: "t3" })).toMatchObject({ branchDeleted: true }); // merged (no new commits) → deleted
    expect(t3.task).toBe("t3");
    expect(await ws.listTasks()).toEqual([]);
  });
});

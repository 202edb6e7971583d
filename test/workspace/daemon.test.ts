import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RepoLocks } from "../../daemon/workspace/repo-lock.js";
import { CLI_MAIN, TestDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { git, writeFile } from "./helpers.js";

const SECRET = "sk-live-e2e-9f8e7d6c5b4a";

/** Runs the built CLI against the daemon; stdin text optional. */
function cli(daemon: TestDaemon, args: string[], stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { env: daemon.cliEnv, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe.skipIf(!toolAvailable("git"))("coding workspace through the daemon (real git, WebSocket)", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let other: TestClient;
  let root: string;

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
    other = await daemon.client();
    root = path.join(daemon.dirs.root, "workspace");
  });
  afterAll(async () => {
    await client?.close();
    await other?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("repos.add runs as a job (git init), refuses bad input at once, and repos.list shows the clone", async () => {
    const { job } = await client.ok("repos.add", { repo: "app", wait: 30_000 });
    expect(job).toMatchObject({ kind: "repos.add", state: "succeeded" });
    expect(job.result).toMatchObject({ repo: "app", branch: "main", initialCommit: true, path: path.join(root, "project/repos/app/repo") });
    expect((await client.call("repos.add", { repo: "app" })).error).toMatchObject({ code: "conflict", path: "/repo" });
    expect((await client.call("repos.add", { repo: "../x" })).error).toMatchObject({ code: "invalid_request", path: "/repo" });
    expect((await client.call("repos.add", { repo: "y", url: `https://u:${SECRET}@example.com/r.git` })).error).toMatchObject({
      code: "invalid_request",
      path: "/url",
    });
    const listed = await client.ok("repos.list");
    expect(listed.repos.map((r: { repo: string }) => r.repo)).toEqual(["app"]);
  });

  it("a clone's final status shows final progress (it stayed at its last report: done 0, total null)", async () => {
    const { job } = await client.ok("repos.add", { repo: "copy", path: path.join(root, "project/repos/app/repo"), wait: 30_000 });
    expect(job).toMatchObject({ kind: "repos.add", state: "succeeded" });
    expect(job.progress).toMatchObject({ phase: "done", message: "" });
    expect(job.progress.total).not.toBeNull();
    expect(job.progress.done).toBe(job.progress.total);
  });

  it("cancelling a repos.add job stops the clone and leaves nothing behind", async () => {
    let onRequest!: () => void;
    const requested = new Promise<void>((resolve) => (onRequest = resolve));
    const server = http.createServer(() => onRequest()); // accepts, never answers
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const { job } = await client.ok("repos.add", { repo: "hang", url: `http://127.0.0.1:${port}/r.git` });
      expect(job.state === "queued" || job.state === "running").toBe(true);
      await requested;
      await client.ok("jobs.cancel", { job: job.id });
      const { job: ended } = await client.ok("jobs.wait", { job: job.id, timeoutMs: 20_000 });
      expect(ended.state).toBe("cancelled");
      expect(fs.readdirSync(path.join(root, "project/repos/hang")).filter((n) => n !== ".lock")).toEqual([]);
      expect((await client.ok("repos.list")).repos.map((r: { repo: string }) => r.repo)).not.toContain("hang");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("hostile task ids are refused before anything touches the disk", async () => {
    for (const task of ["../../etc", ".git", "-b", "a/b", "x.lock", "a".repeat(65)]) {
      const reply = await client.call("tasks.create", { task, repo: "app" });
      expect(reply.error, task).toMatchObject({ code: "invalid_request", path: "/task" });
    }
    expect(fs.existsSync(path.join(root, "tasks")) ? fs.readdirSync(path.join(root, "tasks")) : []).toEqual([]);
  });

  it("two tasks of one repo commit at once over two connections: both land, one waited for the lock", async () => {
    const a = await client.ok("tasks.create", { task: "a", repo: "app" });
    const b = await client.ok("tasks.create", { task: "b", repo: "app" });
    expect(a).toMatchObject({ branch: "task-a", path: path.join(root, "tasks/a/repo") });
    writeFile(a.path, "a.txt", "a\n");
    writeFile(b.path, "b.txt", "b\n");
    const [ca, cb] = await Promise.all([
      client.ok("tasks.commit", { task: "a", message: "from a" }),
      other.ok("tasks.commit", { task: "b", message: "from b" }),
    ]);
    expect(ca.committed && cb.committed).toBe(true);
    expect([ca.lockWaitMs, cb.lockWaitMs].filter((ms: number) => ms > 0)).toHaveLength(1);
    const clone = path.join(root, "project/repos/app/repo");
    expect(git(clone, "rev-parse", "task-a", "task-b").trim().split("\n")).toEqual([ca.commit, cb.commit]);
    expect(git(clone, "fsck", "--strict", "--no-progress")).toBe("");
    const tasks = await client.ok("tasks.list", { repo: "app" });
    expect(tasks.tasks.map((t: { task: string; commit: string }) => [t.task, t.commit])).toEqual([
      ["a", ca.commit],
      ["b", cb.commit],
    ]);
  });

  it("the lock holds across processes: a commit waits for this test process's lock, another repo does not", async () => {
    await client.ok("repos.add", { repo: "r1", wait: 30_000 });
    await client.ok("repos.add", { repo: "r2", wait: 30_000 });
    const t1 = await client.ok("tasks.create", { task: "p1", repo: "r1" });
    const t2 = await client.ok("tasks.create", { task: "p2", repo: "r2" });
    writeFile(t1.path, "1.txt", "1");
    writeFile(t2.path, "2.txt", "2");
    const ours = new RepoLocks((repo) => path.join(root, "project/repos", repo, ".lock"));
    const held = await ours.acquire("r1", { purpose: "test process holds r1" });
    const r1 = client.ok("tasks.commit", { task: "p1", message: "one" });
    let r1Done = false;
    void r1.then(() => (r1Done = true));
    const r2 = await other.ok("tasks.commit", { task: "p2", message: "two" });
    expect(r2).toMatchObject({ committed: true, lockWaitMs: 0 });
    expect(r1Done).toBe(false); // still blocked on our lock file
    await held.release();
    const c1 = await r1;
    expect(c1.committed).toBe(true);
    expect(c1.lockWaitMs).toBeGreaterThan(0);
  });

  it("secrets.write: the root .env is 0600, never echoed, never logged, never committed; a subdirectory .env is", async () => {
    const t = await client.ok("tasks.create", { task: "s", repo: "app" });
    const reply = await client.call("secrets.write", { task: "s", values: { API_KEY: SECRET, MODE: "dev" } });
    expect(reply.ok).toBe(true);
    expect(reply.result).toMatchObject({ task: "s", repo: "app", names: ["API_KEY", "MODE"], path: path.join(t.path, ".env") });
    expect(JSON.stringify(reply)).not.toContain(SECRET);
    expect(fs.statSync(reply.result.path).mode & 0o777).toBe(0o600);
    const bad = await client.call("secrets.write", { task: "s", values: { X: `${SECRET}\nY=1` } });
    expect(bad.error).toMatchObject({ code: "invalid_request", path: "/values/X" });
    expect(JSON.stringify(bad)).not.toContain(SECRET);
    writeFile(t.path, "svc/.env", "PUBLIC=1\n");
    const c = await client.ok("tasks.commit", { task: "s", message: "svc" });
    expect(c.files).toEqual(["svc/.env"]);
    expect(git(t.path, "log", "--all", "-p")).not.toContain(SECRET);
    expect(fs.existsSync(path.join(t.path, ".gitignore"))).toBe(false);
    expect(await client.ok("tasks.commit", { task: "s", message: "again" })).toMatchObject({ committed: false, fileCount: 0 });
    expect(daemon.logLines.join("\n")).not.toContain(SECRET);
    // A tracked .env is refused.
    git(t.path, "add", "-f", ".env");
    git(t.path, "commit", "-q", "-m", "oops, tracked .env");
    expect((await client.call("secrets.write", { task: "s", values: { A: "1" } })).error).toMatchObject({ code: "conflict" });
  });

  it("a merge conflict is aborted, reports the files, and leaves the clone clean", async () => {
    const x = await client.ok("tasks.create", { task: "mx", repo: "app" });
    const y = await client.ok("tasks.create", { task: "my", repo: "app" });
    writeFile(x.path, "same.txt", "x\n");
    writeFile(y.path, "same.txt", "y\n");
    await client.ok("tasks.commit", { task: "mx", message: "x" });
    await client.ok("tasks.commit", { task: "my", message: "y" });
    const merged = await client.ok("tasks.merge", { task: "mx" });
    expect(merged).toMatchObject({ merged: true, into: "main" });
    const conflict = await client.call("tasks.merge", { task: "my" });
    expect(conflict.error).toMatchObject({ code: "conflict", details: { files: ["same.txt"], into: "main" } });
    const clone = path.join(root, "project/repos/app/repo");
    expect(git(clone, "status", "--porcelain")).toBe("");
    expect(git(clone, "rev-parse", "HEAD").trim()).toBe(merged.commit);
  });

  it("repos.snapshot lists the tree; repos.bundle clones back with every task branch", async () => {
    const snap = await client.ok("repos.snapshot", { repo: "app", wait: 30_000 });
    expect(snap.job).toMatchObject({ kind: "repos.snapshot", state: "succeeded" });
    expect(path.dirname(snap.job.result.path)).toBe(path.join(daemon.dirs.state, "snapshots"));
    const listing = execFileSync("tar", ["-tzf", snap.job.result.path], { encoding: "utf8" }).trim().split("\n").sort();
    expect(listing).toEqual(["same.txt"]);
    expect((await client.call("repos.snapshot", { repo: "app", ref: "nope" })).error).toMatchObject({ code: "not_found", path: "/ref" });

    const bundle = await client.ok("repos.bundle", { repo: "app", wait: 30_000 });
    expect(bundle.job.state).toBe("succeeded");
    const restored = path.join(daemon.dirs.root, "restored");
    git(daemon.dirs.root, "clone", "-q", bundle.job.result.path, restored);
    const branches = git(restored, "branch", "-r", "--format=%(refname:short)").trim().split("\n");
    expect(branches).toEqual(
      expect.arrayContaining(["origin/main", "origin/task-a", "origin/task-b", "origin/task-s", "origin/task-mx", "origin/task-my"]),
    );
  });

  it("an observe token may list but not change the workspace", async () => {
    const { token } = await client.ok("tokens.create", { scope: "observe" });
    const viewer = await daemon.client({}, token);
    try {
      expect((await viewer.ok("repos.list")).repos.length).toBeGreaterThan(0);
      expect((await viewer.ok("tasks.list")).tasks.length).toBeGreaterThan(0);
      for (const [action, params] of [
        ["tasks.commit", { task: "a", message: "x" }],
        ["secrets.write", { repo: "app", values: { A: "1" } }],
        ["repos.add", { repo: "z" }],
        ["tasks.remove", { task: "a" }],
      ] as const) {
        expect((await viewer.call(action, params)).error?.code, action).toBe("forbidden");
      }
    } finally {
      await viewer.close();
    }
  });

  it("the CLI verbs drive the same actions; secrets come from stdin", async () => {
    const add = await cli(daemon, ["repos", "add", "cli", "--json"]);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout.trim().split("\n").pop()!)).toMatchObject({ repo: "cli", branch: "main" });
    const create = await cli(daemon, ["tasks", "create", "c1", "--repo", "cli"]);
    expect(create.code, create.stderr).toBe(0);
    expect(create.stdout).toContain(path.join(root, "tasks/c1/repo"));
    const sec = await cli(daemon, ["secrets", "write", "--task", "c1"], `TOKEN=${SECRET}\n# comment\nOTHER=a=b\n`);
    expect(sec.code, sec.stderr).toBe(0);
    expect(sec.stdout).toContain("OTHER, TOKEN");
    expect(sec.stdout).not.toContain(SECRET);
    expect(fs.readFileSync(path.join(root, "tasks/c1/repo/.env"), "utf8")).toContain(`TOKEN=${SECRET}\n`);
    writeFile(path.join(root, "tasks/c1/repo"), "f.txt", "f");
    const commit = await cli(daemon, ["tasks", "commit", "c1", "-m", "cli commit", "--json"]);
    expect(commit.code, commit.stderr).toBe(0);
    expect(JSON.parse(commit.stdout)).toMatchObject({ committed: true, files: ["f.txt"] });
    const merge = await cli(daemon, ["tasks", "merge", "c1"]);
    expect(merge.stdout).toContain("merged task-c1 into main");
    const list = await cli(daemon, ["tasks", "list", "--repo", "cli", "--json"]);
    expect(JSON.parse(list.stdout).tasks.map((t: { task: string }) => t.task)).toEqual(["c1"]);
    const remove = await cli(daemon, ["tasks", "remove", "c1"]);
    expect(remove.stdout).toContain("removed c1 and branch task-c1");
    const snap = await cli(daemon, ["repos", "snapshot", "cli"]);
    expect(snap.code, snap.stderr).toBe(0);
    expect(fs.existsSync(snap.stdout.trim().split("\n").pop()!)).toBe(true);
  });
});

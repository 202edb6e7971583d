import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { git as gitRaw } from "./helpers.js";

const git = (cwd: string, ...args: string[]): string => gitRaw(cwd, ...args).trim();

const SECRET = "sk-live-coder-1a2b3c4d";

/** A stand-in external coder: reads the task's .env as a file, edits and adds files, exits with $1. */
const CODER = `#!/bin/bash
set -e
echo "coder in $PWD"
if [ -f .env ]; then echo "env file has $(grep -c API_KEY= .env) key"; fi
if printenv API_KEY >/dev/null; then echo "API_KEY leaked into the environment"; fi
mkdir -p src
echo "feature $2" > src/feature.txt
echo "edited" >> README.md
exit "$1"
`;

describe.skipIf(!toolAvailable("git"))("tasks.run: the driver for external coders", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let root: string;
  let coder: string;

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
    root = path.join(daemon.dirs.root, "workspace");
    coder = path.join(daemon.dirs.root, "coder.sh");
    fs.writeFileSync(coder, CODER, { mode: 0o755 });
    await client.ok("repos.add", { repo: "app", wait: 30_000 });
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("creates the task's worktree, runs the coder there and commits what it changed, .env excluded", async () => {
    await client.ok("tasks.create", { task: "t1", repo: "app" });
    await client.ok("secrets.write", { task: "t1", values: { API_KEY: SECRET } });
    const { job, output } = await client.ok("tasks.run", { task: "t1", command: [coder, "0", "one"], message: "coder: one", wait: 30_000 });
    const worktree = path.join(root, "tasks/t1/repo");
    expect(job).toMatchObject({ kind: "tasks.run", state: "succeeded", exitCode: 0 });
    expect(job.result).toMatchObject({ task: "t1", repo: "app", branch: "task-t1", path: worktree, created: false, committed: true });
    expect(job.result.files.sort()).toEqual(["README.md", "src/feature.txt"]);
    expect(output.data).toContain(`coder in ${worktree}`);
    expect(output.data).toContain("env file has 1 key");
    expect(output.data).not.toContain("leaked");
    expect(git(worktree, "log", "-1", "--format=%H %s")).toBe(`${job.result.commit} coder: one`);
    expect(git(worktree, "show", "--name-only", "--format=", "HEAD")).not.toContain(".env");
    expect(JSON.stringify(job)).not.toContain(SECRET);
  });

  it("creates a missing task off base, and with nothing changed answers committed: false", async () => {
    const first = await client.ok("tasks.run", { task: "t2", repo: "app", base: "main", command: `${coder} 0 two`, wait: 30_000 });
    expect(first.job.result).toMatchObject({ created: true, committed: true, branch: "task-t2" });
    expect(first.job.result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(path.join(root, "tasks/t2/repo"), "log", "-1", "--format=%s")).toBe(`tasks.run: ${coder} 0 two`);
    const again = await client.ok("tasks.run", { task: "t2", command: "true", wait: 30_000 });
    expect(again.job.result).toMatchObject({ created: false, committed: false, fileCount: 0 });
  });

  it("a failing command commits nothing and leaves the worktree's changes for inspection", async () => {
    await client.ok("tasks.run", { task: "t3", repo: "app", command: "true", wait: 30_000 });
    const worktree = path.join(root, "tasks/t3/repo");
    const head = git(worktree, "rev-parse", "HEAD");
    const { job } = await client.ok("tasks.run", { task: "t3", command: [coder, "3", "three"], wait: 30_000 });
    expect(job).toMatchObject({ state: "failed", exitCode: 3 });
    expect(job.result).toBeUndefined();
    expect(git(worktree, "rev-parse", "HEAD")).toBe(head);
    expect(fs.readFileSync(path.join(worktree, "src/feature.txt"), "utf8")).toBe("feature three\n");
    expect(git(worktree, "status", "--porcelain")).toContain("README.md");
  });

  it("refuses a task of another repository, an unknown repository, and a bad task id in the reply", async () => {
    await client.ok("repos.add", { repo: "other", wait: 30_000 });
    const mismatch = await client.call("tasks.run", { task: "t1", repo: "other", command: "true" });
    expect(mismatch.error).toMatchObject({ code: "conflict", path: "/repo", details: { repo: "app" } });
    const unknown = await client.call("tasks.run", { task: "t9", repo: "nope", command: "true" });
    expect(unknown.error).toMatchObject({ code: "not_found", path: "/repo" });
    const bad = await client.call("tasks.run", { task: "../x", command: "true" });
    expect(bad.error).toMatchObject({ code: "invalid_request", path: "/task" });
    expect(fs.existsSync(path.join(root, "tasks/t9"))).toBe(false);
  });
});

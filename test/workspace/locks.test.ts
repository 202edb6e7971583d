import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { processStartTicks } from "../../daemon/process/index.js";
import { RepoLocks, type LockWaitInfo } from "../../daemon/workspace/repo-lock.js";
import { withDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { writeFile } from "./helpers.js";

/** A lock file path in a fresh temp dir. */
function lockFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hotline-lock-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, "repo.lock");
}

/** Another process that takes the lock file in the daemon's format and holds it until its stdin closes. */
const HOLDER = `
const fs = require("fs"), os = require("os");
const file = process.argv[1];
const stat = fs.readFileSync("/proc/self/stat", "utf8");
const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
fs.writeFileSync(file, JSON.stringify({ pid: process.pid, startTime, hostname: os.hostname(), acquiredAt: new Date().toISOString(), purpose: "child holder", nonce: "child-" + process.pid }), { flag: "wx" });
process.stdout.write("held\\n");
process.stdin.on("end", () => { fs.rmSync(file, { force: true }); process.exit(0); });
process.stdin.resume();
`;

async function spawnHolder(file: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", HOLDER, file], { stdio: ["pipe", "pipe", "inherit"] });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`holder exited early (${code})`)));
  });
  return child;
}

const hasProc = fs.existsSync("/proc/self/stat");

describe("repository locks", () => {
  it("serializes holders inside one process in FIFO order and reports the wait", async () => {
    const locks = new RepoLocks(() => lockFile());
    const first = await locks.acquire("r", { purpose: "first" });
    expect(first.waited).toBe(false);
    const order: string[] = [];
    const waits: LockWaitInfo[] = [];
    const second = locks.acquire("r", { purpose: "second", onWait: (i) => waits.push(i) }).then((h) => {
      order.push("second");
      return h;
    });
    const third = locks.acquire("r", { purpose: "third" }).then((h) => {
      order.push("third");
      return h;
    });
    expect(waits).toHaveLength(1);
    await first.release();
    const h2 = await second;
    expect(h2.waited).toBe(true);
    await h2.release();
    await (await third).release();
    expect(order).toEqual(["second", "third"]);
    expect(locks.stats("r")).toMatchObject({ acquired: 3, waited: 2 });
  });

  it("different keys never wait on each other", async () => {
    const dir = path.dirname(lockFile());
    const locks = new RepoLocks((k) => path.join(dir, `${k}.lock`));
    const a = await locks.acquire("a", { purpose: "hold a" });
    const b = await locks.acquire("b", { purpose: "b" });
    expect(b.waited).toBe(false);
    await Promise.all([a.release(), b.release()]);
  });

  it("a waiter whose signal aborts leaves the queue without wedging it", async () => {
    const locks = new RepoLocks(() => lockFile());
    const held = await locks.acquire("r", { purpose: "holder" });
    const ac = new AbortController();
    const waiting = locks.acquire("r", { purpose: "gives up", signal: ac.signal });
    ac.abort(new Error("gave up"));
    await expect(waiting).rejects.toThrow("gave up");
    await held.release();
    const next = await locks.acquire("r", { purpose: "next" });
    expect(next.waited).toBe(false);
    await next.release();
  });

  it("holds across processes: two lock tables on one file never overlap", async () => {
    const file = lockFile();
    const tables = [new RepoLocks(() => file), new RepoLocks(() => file), new RepoLocks(() => file)];
    let inside = 0;
    let maxInside = 0;
    let waited = 0;
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const h = await tables[i % 3]!.acquire("r", { purpose: `w${i}` });
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        await new Promise((r) => setImmediate(r));
        inside -= 1;
        if (h.waited) waited += 1;
        await h.release();
      }),
    );
    expect(maxInside).toBe(1);
    expect(waited).toBeGreaterThan(0);
    expect(fs.existsSync(file)).toBe(false);
  });

  it.skipIf(!hasProc)("waits for a live holder in another process, naming it, until it releases", async () => {
    const file = lockFile();
    const child = await spawnHolder(file);
    const locks = new RepoLocks(() => file);
    let seen: LockWaitInfo | undefined;
    const pending = locks.acquire("r", {
      purpose: "parent",
      onWait: (info) => {
        seen = info;
        child.stdin!.end(); // the holder releases once we are known to be waiting
      },
    });
    const h = await pending;
    expect(seen?.holder).toMatchObject({ pid: child.pid, purpose: "child holder" });
    expect(h).toMatchObject({ waited: true, recoveredStale: false });
    expect(JSON.parse(fs.readFileSync(file, "utf8")).pid).toBe(process.pid);
    await h.release();
  });

  it.skipIf(!hasProc)("a holder killed while we wait (crash) is detected and its lock taken over", async () => {
    const file = lockFile();
    const child = await spawnHolder(file);
    const locks = new RepoLocks(() => file);
    const h = await locks.acquire("r", { purpose: "parent", onWait: () => child.kill("SIGKILL") });
    expect(h).toMatchObject({ waited: true, recoveredStale: true });
    expect(locks.stats("r").staleRecovered).toBe(1);
    await h.release();
  });

  it.skipIf(!hasProc)("a lock left by a process that already died is recovered at once", async () => {
    const file = lockFile();
    const child = await spawnHolder(file);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(fs.existsSync(file)).toBe(true);
    const h = await new RepoLocks(() => file).acquire("r", { purpose: "after crash" });
    expect(h).toMatchObject({ waited: false, recoveredStale: true });
    await h.release();
  });

  it.skipIf(!hasProc)("a reused pid (alive, other start time) does not keep a dead holder's lock", async () => {
    const file = lockFile();
    const reused = {
      pid: process.pid,
      startTime: String(Number(processStartTicks(process.pid)) + 1),
      hostname: os.hostname(),
      acquiredAt: "2020-01-01T00:00:00Z",
      purpose: "old",
      nonce: "x",
    };
    fs.writeFileSync(file, JSON.stringify(reused));
    const h = await new RepoLocks(() => file).acquire("r", { purpose: "new" });
    expect(h.recoveredStale).toBe(true);
    await h.release();
  });

  it("a wait past its deadline answers conflict naming the in-process holder, and leaves the queue intact", async () => {
    const locks = new RepoLocks(() => lockFile());
    const held = await locks.acquire("r", { purpose: "tasks.merge slow" });
    const err = await locks.acquire("r", { purpose: "impatient", timeoutMs: 20 }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: "conflict",
      details: { repo: "r", lockTimeoutMs: 20, holder: { pid: process.pid, hostname: os.hostname(), purpose: "tasks.merge slow" } },
    });
    await held.release();
    const next = await locks.acquire("r", { purpose: "next", timeoutMs: 20 });
    expect(next.waited).toBe(false);
    await next.release();
  });

  it("a torn (empty) lock file is waited on while fresh and taken over once old", async () => {
    const file = lockFile();
    fs.writeFileSync(file, "");
    const ac = new AbortController();
    const locks = new RepoLocks(() => file);
    await expect(
      locks.acquire("r", { purpose: "p", signal: ac.signal, onWait: () => ac.abort(new Error("fresh torn file is respected")) }),
    ).rejects.toThrow("fresh torn file");
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(file, past, past);
    const h = await locks.acquire("r", { purpose: "p" });
    expect(h.recoveredStale).toBe(true);
    await h.release();
  });
});

describe.skipIf(!toolAvailable("git") || !hasProc)("repository lock deadlines through the daemon", () => {
  it("tasks.commit against a lock another live process holds: conflict naming its pid and host after lockTimeoutMs; works once released", async () => {
    await withDaemon({}, async (daemon, client) => {
      await client.ok("repos.add", { repo: "app", wait: 30_000 });
      const task = await client.ok("tasks.create", { task: "t1", repo: "app" });
      writeFile(task.path, "a.txt", "a\n");
      const lockPath = path.join(daemon.dirs.root, "workspace/project/repos/app/.lock");
      const holder = await spawnHolder(lockPath);
      const refused = await client.call("tasks.commit", { task: "t1", message: "add a", lockTimeoutMs: 300 });
      expect(refused.error).toMatchObject({
        code: "conflict",
        path: "/lockTimeoutMs",
        details: { repo: "app", lockTimeoutMs: 300, holder: { pid: holder.pid, hostname: os.hostname(), purpose: "child holder" } },
      });
      expect(refused.error.message).toContain(`pid ${holder.pid} on ${os.hostname()}`);
      holder.stdin!.end();
      await new Promise((resolve) => holder.once("exit", resolve));
      const done = await client.ok("tasks.commit", { task: "t1", message: "add a", lockTimeoutMs: 30_000 });
      expect(done).toMatchObject({ committed: true, files: ["a.txt"] });
    });
  });

  it("a dangling symlink or a FIFO at the lock path is refused with conflict naming it, and the daemon keeps answering", async () => {
    await withDaemon({}, async (daemon, client) => {
      await client.ok("repos.add", { repo: "app", wait: 30_000 });
      const task = await client.ok("tasks.create", { task: "t1", repo: "app" });
      writeFile(task.path, "a.txt", "a\n");
      const lockPath = path.join(daemon.dirs.root, "workspace/project/repos/app/.lock");
      // Create fails with EEXIST and a read finds nothing: the old wait looped on this forever.
      fs.symlinkSync(path.join(path.dirname(lockPath), "nowhere"), lockPath);
      const viaLink = await client.call("tasks.commit", { task: "t1", message: "add a", lockTimeoutMs: 500 });
      expect(viaLink.error).toMatchObject({ code: "conflict", details: { lockFile: lockPath } });
      expect(viaLink.error.message).toContain(`${lockPath} is a symbolic link`);
      expect(viaLink.error.message).toContain("remove it");
      await client.ok("state.info", {});
      fs.rmSync(lockPath);
      execFileSync("mkfifo", [lockPath]);
      const viaFifo = await client.call("tasks.commit", { task: "t1", message: "add a", lockTimeoutMs: 30_000 });
      expect(viaFifo.error).toMatchObject({ code: "conflict", details: { lockFile: lockPath } });
      expect(viaFifo.error.message).toContain("not a regular file");
      await client.ok("state.info", {});
      fs.rmSync(lockPath);
      const done = await client.ok("tasks.commit", { task: "t1", message: "add a" });
      expect(done).toMatchObject({ committed: true });
    });
  }, 20_000);
});

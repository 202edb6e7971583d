import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TestClient, TestDaemon } from "./helpers/daemon.js";

const score = (pid: number): number => Number(readFileSync(`/proc/${pid}/oom_score_adj`, "utf8"));

/** Waits until a running job reports its pid. */
async function runningPid(client: TestClient, job: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const status = await client.ok("jobs.status", { job });
    if (status.pid) return status.pid as number;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${job} never reported a pid`);
}

describe("the OOM killer takes a job before the daemon", { timeout: 60_000 }, () => {
  let daemon: TestDaemon;
  let client: TestClient;
  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("shell, terminal and files.run jobs start 500 above the daemon's oom_score_adj; the daemon's own is unchanged", async () => {
    const own = score(process.pid);
    expect(score(daemon.proc.pid!)).toBe(own); // the daemon inherits ours and keeps it
    const expected = Math.min(1000, own + 500);
    const script = join(daemon.dirs.root, "sleep.sh");
    writeFileSync(script, "sleep 30\n");
    const started = [
      (await client.ok("shell", { command: ["sleep", "30"] })).job.id,
      (await client.ok("shell", { command: ["sleep", "30"], pty: { cols: 80, rows: 24 } })).job.id,
      (await client.ok("terminal.open", { cols: 80, rows: 24 })).job.id,
      (await client.ok("files.run", { path: script })).job.id,
    ] as string[];
    for (const job of started) {
      const pid = await runningPid(client, job);
      expect({ job, score: score(pid) }).toEqual({ job, score: expected });
      await client.ok("jobs.cancel", { job });
    }
    expect(score(daemon.proc.pid!)).toBe(own);
  });

  it("a job that SIGKILLs itself ends failed with signal SIGKILL and no word of memory", async () => {
    const { job } = await client.ok("shell", { command: "kill -9 $$", wait: 20_000 });
    expect(job).toMatchObject({ state: "failed", signal: "SIGKILL" });
    expect(job.error).toBeUndefined();
  });

  // A real OOM kill, confined to a 32 MiB memory cgroup under the daemon's own (nothing else runs short).
  const memoryCgroup = (() => {
    const line = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((l) => l.split(":")[1]?.split(",").includes("memory"));
    const dir = line ? `/sys/fs/cgroup/memory${line.split(":")[2]}` : "";
    if (!line || !existsSync(join(dir, "memory.oom_control"))) return undefined;
    try {
      // Only where this test may make a sub-cgroup (cgroup v1, writable: root in a container or VM).
      mkdirSync(join(dir, `hotline-oom-probe-${process.pid}`));
      rmdirSync(join(dir, `hotline-oom-probe-${process.pid}`));
      return dir;
    } catch {
      return undefined;
    }
  })();
  it.runIf(memoryCgroup !== undefined)(
    "a job the kernel's OOM killer takes ends failed, signal SIGKILL, and says it ran out of memory",
    async () => {
      const cage = join(memoryCgroup!, `hotline-oom-test-${process.pid}`);
      mkdirSync(cage);
      try {
        writeFileSync(join(cage, "memory.limit_in_bytes"), String(32 * 1024 * 1024));
        const hog = `echo $$ > ${cage}/cgroup.procs && exec ${process.execPath} -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))"`;
        const { job } = await client.ok("shell", { command: hog, wait: 40_000 });
        expect(job).toMatchObject({ state: "failed", signal: "SIGKILL", error: { code: "limit_exceeded" } });
        expect(job.error.message).toMatch(/OOM killer .*ran out of memory/);
      } finally {
        rmdirSync(cage);
      }
    },
  );

  it.runIf(memoryCgroup !== undefined)("the error of a job the OOM killer took names the peak its processes reached", async () => {
    const cage = join(memoryCgroup!, `hotline-oom-peak-${process.pid}`);
    mkdirSync(cage);
    try {
      writeFileSync(join(cage, "memory.limit_in_bytes"), String(64 * 1024 * 1024));
      // 24 MiB held until stdin says go (the test waits for the sampler to have seen it), then more until the kill.
      const hog =
        `echo $$ > ${cage}/cgroup.procs && exec ${process.execPath} -e "` +
        "const a = [Buffer.alloc(24 << 20, 1)]; process.stdin.once('data', () => { for (;;) a.push(Buffer.alloc(1 << 20, 1)); })\"";
      const { job } = await client.ok("shell", { command: hog, stdin: true });
      let seen = 0;
      for (let i = 0; i < 300 && seen < 24 << 20; i++) {
        seen = (await client.ok("jobs.status", { job: job.id })).usage?.rssBytes ?? 0;
        if (seen < 24 << 20) await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toBeGreaterThanOrEqual(24 << 20);
      await client.ok("jobs.input", { job: job.id, data: "go\n" });
      const { job: ended } = await client.ok("jobs.wait", { job: job.id, timeoutMs: 40_000 });
      expect(ended).toMatchObject({ state: "failed", signal: "SIGKILL", error: { code: "limit_exceeded" } });
      expect(ended.error.message).toMatch(/OOM killer .*ran out of memory.*; its processes peaked at \d+\.\d MiB resident/);
      expect(ended.error.details.peakRssBytes).toBeGreaterThanOrEqual(24 << 20);
      expect(ended.usage.peakRssBytes).toBe(ended.error.details.peakRssBytes);
    } finally {
      rmdirSync(cage);
    }
  });
});

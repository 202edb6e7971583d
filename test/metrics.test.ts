import { describe, expect, it, onTestFinished } from "vitest";
import { TestDaemon, type Frame, type TestClient, useDaemon } from "./helpers/daemon.js";

/** What the test jobs allocate: 300 MB, each page touched (an untouched bytearray is never resident). */
const ALLOC = 300_000_000;
/** Allocate, then burn 1 s of CPU holding it: the peak is held for at least a second of wall time. */
const WORK = `import time
b = bytearray(${ALLOC})
for i in range(0, len(b), 4096): b[i] = 1
t = time.process_time()
while time.process_time() - t < 1.0: pass
`;
/** Allocate, say so, and hold until stdin closes. */
const HOLD = `import sys
b = bytearray(${ALLOC})
for i in range(0, len(b), 4096): b[i] = 1
print("held", flush=True)
sys.stdin.read()
`;

/** Polls jobs.status until `done` says yes; fails with the last status. */
async function statusUntil(client: TestClient, job: string, done: (s: Frame) => boolean, what: string): Promise<Frame> {
  let last: Frame = {};
  for (let i = 0; i < 600; i++) {
    last = await client.ok("jobs.status", { job });
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${job} never reached ${what}; last status ${JSON.stringify(last)}`);
}

/** The newest sample, once there is one. */
async function latestSample(client: TestClient): Promise<Frame> {
  for (let i = 0; i < 300; i++) {
    const { samples } = await client.ok("state.metrics", { limit: 1 });
    if (samples.length) return samples[0];
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("state.metrics never had a sample");
}

describe("a process job's usage", { timeout: 180_000 }, () => {
  const ctx = useDaemon();

  it.each([
    { where: "in its main process", params: { command: ["python3", "-c", WORK] } },
    // bash waits for a python3 that setsid moved into a session of its own: found by AGENT_JOB_ID, counted through bash
    { where: "in a setsid grandchild", params: { command: 'setsid python3 -c "$WORK" & wait', env: { WORK } } },
  ])("300 MB and 1 s of CPU $where: peak RSS within 10 % of 300 MB, cpuMs ≥ 900 at exit", async ({ params }) => {
    const { job } = await ctx.client.ok("shell", { ...params, wait: 120_000 });
    expect(job.state, JSON.stringify(job)).toBe("succeeded");
    expect(job.usage.cpuMs).toBeGreaterThanOrEqual(900);
    expect(Math.abs(job.usage.peakRssBytes - ALLOC), JSON.stringify(job.usage)).toBeLessThanOrEqual(ALLOC * 0.1);
    // At the end nothing of it is alive: the figures are final.
    expect(job.usage).toMatchObject({ rssBytes: 0, processes: 0 });
    expect((await ctx.client.ok("jobs.status", { job: job.id })).usage).toEqual(job.usage);
  });

  it("is live while the job runs (from the sampler, not at its start), and every process job has one at its end", async () => {
    const { job } = await ctx.client.ok("shell", { command: ["python3", "-c", HOLD], stdin: true });
    onTestFinished(async () => void (await ctx.client.call("jobs.cancel", { job: job.id }).catch(() => undefined)));
    expect(job.usage).toBeUndefined(); // nothing is read on a job's start
    const live = await statusUntil(ctx.client, job.id, (s) => s.usage?.rssBytes >= ALLOC * 0.9, "300 MB resident");
    expect(live.usage).toMatchObject({ processes: 1 });
    expect(live.usage.peakRssBytes).toBeGreaterThanOrEqual(live.usage.rssBytes);
    await ctx.client.ok("jobs.input", { job: job.id, eof: true });
    const { job: ended } = await ctx.client.ok("jobs.wait", { job: job.id, timeoutMs: 60_000 });
    expect(ended.usage).toMatchObject({ rssBytes: 0, processes: 0 });
    expect(ended.usage.peakRssBytes).toBeGreaterThanOrEqual(live.usage.peakRssBytes);
    // A job too short for any sample still ends with its CPU (what its exit added): no process job ends without usage.
    const { job: quick } = await ctx.client.ok("shell", { command: "true", wait: 30_000 });
    expect(quick.usage).toMatchObject({ rssBytes: 0, processes: 0 });
    expect(quick.usage.cpuMs).toBeGreaterThanOrEqual(0);
  });

  it("jobs.list sorts by CPU and by peak memory; before pages only the newest-first order", async () => {
    const { job: big } = await ctx.client.ok("shell", { command: ["python3", "-c", HOLD], stdin: true });
    await statusUntil(ctx.client, big.id, (s) => s.usage?.peakRssBytes >= ALLOC * 0.9, "300 MB resident");
    await ctx.client.ok("jobs.input", { job: big.id, eof: true });
    await ctx.client.ok("jobs.wait", { job: big.id, timeoutMs: 60_000 });
    const burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5: pass\n";
    const { job: busy } = await ctx.client.ok("shell", { command: ["python3", "-c", burn], wait: 120_000 });
    expect(busy.usage.cpuMs).toBeGreaterThan(1400);
    const order = async (sort: string) =>
      (await ctx.client.ok("jobs.list", { sort, limit: 1000 })).jobs
        .map((j: Frame) => j.id)
        .filter((id: string) => id === big.id || id === busy.id);
    expect(await order("cpu")).toEqual([busy.id, big.id]);
    expect(await order("memory")).toEqual([big.id, busy.id]);
    expect(await order("newest")).toEqual([busy.id, big.id]);
    const refused = await ctx.client.call("jobs.list", { sort: "cpu", before: busy.id });
    expect(refused.error).toMatchObject({ code: "invalid_request", path: "/before" });
    const byCpu = (await ctx.client.ok("jobs.list", { sort: "cpu", limit: 1000 })).jobs as Frame[];
    const cpu = byCpu.filter((j) => j.usage).map((j) => j.usage.cpuMs);
    expect(cpu).toEqual([...cpu].sort((a, b) => b - a));
  });

  it("survives a restart with the job's record", async () => {
    const daemon = await TestDaemon.start();
    const client = await daemon.client();
    const { job } = await client.ok("shell", { command: ["python3", "-c", WORK], wait: 120_000 });
    await client.close();
    await daemon.stop();
    const again = await TestDaemon.start({ dirs: daemon.dirs });
    onTestFinished(async () => {
      await again.stop();
      again.cleanup();
    });
    const restarted = await again.client();
    onTestFinished(() => restarted.close());
    expect((await restarted.ok("jobs.status", { job: job.id })).usage).toEqual(job.usage);
  });
});

describe("state.metrics", { timeout: 180_000 }, () => {
  const ctx = useDaemon({ args: ["--metrics-interval-ms", "250"] });

  it("shows memory rising while a job holds 300 MB, and the job's own memory in the sample", async () => {
    // The machine's memory moves with everything else on it: a rise of half the job's is looked for in up to three tries.
    const tries: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = await latestSample(ctx.client);
      const { job } = await ctx.client.ok("shell", { command: ["python3", "-c", HOLD], stdin: true });
      await statusUntil(ctx.client, job.id, (s) => s.usage?.rssBytes >= ALLOC * 0.9, "300 MB resident");
      let during: Frame | undefined;
      for (let i = 0; i < 300 && !during; i++) {
        const { samples } = await ctx.client.ok("state.metrics", { sinceMs: before.at, limit: 3600 });
        during = samples.find((s: Frame) => s.jobs.rssBytes >= ALLOC * 0.9);
        if (!during) await new Promise((r) => setTimeout(r, 100));
      }
      await ctx.client.ok("jobs.input", { job: job.id, eof: true });
      await ctx.client.ok("jobs.wait", { job: job.id, timeoutMs: 60_000 });
      expect(during, "a sample taken while the job held its memory").toBeDefined();
      expect(during!.runningJobs).toBeGreaterThanOrEqual(1);
      const rise = during!.memory.usedBytes - before.memory.usedBytes;
      tries.push(`${(rise / 1e6).toFixed(0)} MB`);
      if (rise >= ALLOC / 2) return;
    }
    throw new Error(`memory.usedBytes did not rise by 150 MB while the job held 300 MB (rises: ${tries.join(", ")})`);
  });

  it("answers the shape it documents; sinceMs returns only newer samples and limit the newest", async () => {
    const first = await latestSample(ctx.client);
    for (let i = 0; i < 100; i++) {
      const { samples } = await ctx.client.ok("state.metrics", { sinceMs: first.at });
      if (samples.length >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const reply = await ctx.client.ok("state.metrics", { limit: 3600 });
    expect(reply).toMatchObject({ intervalMs: 250, enabled: true, more: false });
    expect(reply.windowMs).toBe(3600 * 250); // 3600 samples at most, however short the interval
    expect(reply.sources.cpu).toMatch(/cgroup|\/proc\/stat/);
    const ats = reply.samples.map((s: Frame) => s.at);
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
    const s = reply.samples.at(-1);
    expect(s.cpu.cores).toBeGreaterThan(0);
    expect(s.cpu.usedCores).toBeGreaterThanOrEqual(0);
    expect(s.memory.limitBytes).toBeGreaterThanOrEqual(s.memory.usedBytes);
    expect(s.daemon.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(s.disks.map((d: Frame) => d.name)).toEqual(expect.arrayContaining(["home", "state"]));
    for (const d of s.disks) expect(d.usedBytes + d.freeBytes).toBeGreaterThan(0);
    expect(s.processes).toBeGreaterThan(1);
    // Connections are counted every 10 s: this test's own shows in one sample or another.
    let counted = 0;
    for (let i = 0; i < 300 && counted === 0; i++) {
      counted = (await ctx.client.ok("state.metrics", { limit: 1 })).samples[0].connections;
      if (counted === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(counted).toBeGreaterThanOrEqual(1);
    const newer = await ctx.client.ok("state.metrics", { sinceMs: ats.at(-2), limit: 3600 });
    expect(newer.samples[0].at).toBe(ats.at(-1));
    const two = await ctx.client.ok("state.metrics", { limit: 2 });
    expect(two.samples.length).toBe(2);
    expect(two.more).toBe(true);
    const bad = await ctx.client.call("state.metrics", { limit: 0 });
    expect(bad.error).toMatchObject({ code: "invalid_request", path: "/limit" });
  });

  it("is off with --metrics off: no samples, no usage", async () => {
    const daemon = await TestDaemon.start({ args: ["--metrics", "off"] });
    onTestFinished(async () => {
      await daemon.stop();
      daemon.cleanup();
    });
    const client = await daemon.client();
    onTestFinished(() => client.close());
    const reply = await client.ok("state.metrics");
    expect(reply).toMatchObject({ enabled: false, samples: [] });
    const { job } = await client.ok("shell", { command: ["python3", "-c", WORK], wait: 120_000 });
    expect(job.state).toBe("succeeded");
    expect(job.usage).toBeUndefined();
  });
});

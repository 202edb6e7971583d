import { spawnSync } from "node:child_process";
import { spawn as spawnPty } from "node-pty";
import { describe, expect, it, onTestFinished } from "vitest";
import { screen } from "../cli/commands/top.js";
import type { JobStatus } from "../protocol/common.js";
import { CLI_MAIN, type Frame, useDaemon } from "./helpers/daemon.js";
import { busyPython } from "./helpers/busy-python.js";

const BUSY = busyPython(60_000_000);

describe("hotline top", { timeout: 120_000 }, () => {
  const ctx = useDaemon();

  /** A running job whose usage has been sampled (so top has figures to show). */
  async function busyJob(): Promise<Frame> {
    const { job } = await ctx.client.ok("shell", { command: ["python3", "-c", BUSY], stdin: true });
    onTestFinished(async () => {
      await ctx.client.call("jobs.input", { job: job.id, eof: true });
      await ctx.client.call("jobs.wait", { job: job.id, timeoutMs: 30_000 });
    });
    for (let i = 0; i < 300; i++) {
      const status = await ctx.client.ok("jobs.status", { job: job.id });
      if (status.usage?.rssBytes > 50_000_000) return status;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the job was never sampled");
  }

  /** Until the sandbox has a sample (the first comes one interval after the start): top's header shows it. */
  async function sandboxSampled(): Promise<void> {
    for (let i = 0; i < 300; i++) {
      if ((await ctx.client.ok("state.metrics", {})).samples.length > 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the sandbox was never sampled");
  }

  it("prints one screen when not on a terminal: the sandbox, then the running jobs with CPU% and memory", async () => {
    const job = await busyJob();
    await sandboxSampled();
    const run = spawnSync(process.execPath, [CLI_MAIN, "top", "memory"], { env: ctx.daemon.cliEnv, encoding: "utf8", timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^hotline top \d\d:\d\d:\d\d · CPU \d+% of [\d.]+ cores · memory .* · 1 running · by memory/);
    expect(lines[2]).toMatch(/^JOB\s+CPU%\s+CPU\s+MEM\s+PEAK\s+PROCS\s+KIND\s+TITLE$/);
    expect(lines[3]).toMatch(new RegExp(`^${job.id}\\s+\\d+\\s+[\\d.]+s\\s+[\\d.]+ MiB\\s+[\\d.]+ MiB\\s+1\\s+shell\\s+python3 -c`));
    const bad = spawnSync(process.execPath, [CLI_MAIN, "top", "disk"], { env: ctx.daemon.cliEnv, encoding: "utf8", timeout: 30_000 });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("expected cpu or memory");
  });

  it("on a terminal refreshes on the alternate screen, c/m change the order, q quits and restores the screen", async () => {
    const job = await busyJob();
    const term = spawnPty(process.execPath, [CLI_MAIN, "top"], { cols: 160, rows: 30, env: ctx.daemon.cliEnv });
    let text = "";
    term.onData((d) => (text += d));
    const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    onTestFinished(() => term.kill());
    const waitFor = async (what: string, ok: () => boolean): Promise<void> => {
      for (let i = 0; i < 300 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
      if (!ok()) throw new Error(`top never showed ${what}; it showed:\n${text.slice(-2000)}`);
    };
    await waitFor("the job by CPU", () => text.includes(job.id) && text.includes("by CPU"));
    expect(text.startsWith("\x1b[?1049h")).toBe(true);
    const screens = () => text.split("\x1b[H\x1b[2J").length - 1;
    const drawn = screens();
    await waitFor("a refresh", () => screens() > drawn); // every 2 s
    term.write("m");
    await waitFor("the order by memory", () => text.includes("by memory"));
    term.write("q");
    expect(await exited).toBe(0);
    expect(text.endsWith("\x1b[?25h\x1b[?1049l")).toBe(true);
  });

  it("sorts by CPU share or resident memory, escapes titles, and fits the terminal", () => {
    const job = (id: string, title: string, cpuMs: number, rssBytes: number): JobStatus => ({
      id,
      kind: "shell",
      title,
      state: "running",
      createdAt: "2026-01-01T00:00:00.000Z",
      startedAt: "2026-01-01T00:00:00.000Z",
      outputBytes: 0,
      usage: { cpuMs, rssBytes, peakRssBytes: rssBytes, processes: 1 },
    });
    const rows = [
      { job: job("jaaaaaaa", "light", 100, 900 << 20), percent: 5 },
      { job: job("jbbbbbbb", "heavy\x1b[2J", 9000, 10 << 20), percent: 99 },
    ];
    const byCpu = screen(rows, undefined, "cpu", 200, 40).split("\n");
    expect(byCpu[3]).toMatch(/^jbbbbbbb\s+99\s+9\.0s\s+10\.0 MiB/);
    expect(byCpu[3]).toContain("heavy\\x1b[2J");
    expect(screen(rows, undefined, "memory", 200, 40).split("\n")[3]).toMatch(/^jaaaaaaa/);
    const narrow = screen(rows, undefined, "cpu", 30, 4).split("\n");
    expect(narrow.length).toBe(3);
    for (const line of narrow) expect(line.length).toBeLessThanOrEqual(30);
  });
});

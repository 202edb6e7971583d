import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchDaemon, type BenchRow, median, quantile, startBenchDaemon } from "./common.js";

/** Running jobs each daemon holds while it is measured (the figure). */
const JOBS = 100;

/** CPU time (ms) all threads of a process have spent on a CPU: the sum of their schedstat run times (ns). */
function processCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e6;
}

/** The sampler's own CPU so far (ms), as /metrics reports it. */
async function samplerMs(daemon: BenchDaemon): Promise<number> {
  const res = await fetch(`${daemon.url.replace(/^ws/, "http")}/metrics`, { headers: { Authorization: `Bearer ${daemon.token}` } });
  return Number(/^hotline_metrics_sampling_seconds_total (\S+)$/m.exec(await res.text())![1]) * 1000;
}

async function startJobs(daemon: BenchDaemon, n: number, command: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await daemon.client.request("shell", { command })).job.id);
  return ids;
}

async function cancelAll(daemon: BenchDaemon, ids: string[]): Promise<void> {
  await Promise.all(ids.map((job) => daemon.client.request("jobs.cancel", { job, graceMs: 0, wait: 30_000 }).catch(() => undefined)));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `npm run bench metrics`: what sampling costs. Two daemons in the same run, one with --metrics off,
 * each holding 100 running jobs (`sleep`): (1) the CPU the sampling daemon spends beyond the other
 * one's, both measured over the same idle windows (every thread's schedstat), as a fraction of one
 * core (goal ≤ 1 %); (2) state.info p99 on each, interleaved, with sampling on vs off (goal ±10 %);
 * (3) the sampler's own figure for (1), and (4) one job of 10,000 processes, rows without goals.
 */
export async function metricsBenchmarks(options: { rounds?: number; windowMs?: number } = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? (Number(process.env.HOTLINE_BENCH_RUNS) || 5);
  const windowMs = options.windowMs ?? 10_000;
  const rows: BenchRow[] = [];
  const on = await startBenchDaemon({}, ["--ssh", "off"]);
  const off = await startBenchDaemon({}, ["--ssh", "off", "--metrics", "off"]);
  const onJobs = await startJobs(on, JOBS, ["sleep", "600"]);
  const offJobs = await startJobs(off, JOBS, ["sleep", "600"]);
  try {
    await sleep(3000); // every job found, the first passes (which meet every process of the machine) behind
    // 1. CPU beyond the daemon without sampling, over the same windows.
    const extra: number[] = [];
    const own: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const [a0, b0, s0] = [processCpuMs(on.proc.pid!), processCpuMs(off.proc.pid!), await samplerMs(on)];
      const t0 = performance.now();
      await sleep(windowMs);
      const seconds = (performance.now() - t0) / 1000;
      const [a1, b1, s1] = [processCpuMs(on.proc.pid!), processCpuMs(off.proc.pid!), await samplerMs(on)];
      extra.push((a1 - a0 - (b1 - b0)) / seconds);
      own.push((s1 - s0) / seconds);
    }
    // In percent of one core: ms of CPU per second / 10.
    const spread = (xs: number[]): [number, number] => [quantile(xs, 0.25) / 1000, quantile(xs, 0.75) / 1000];
    const cost = median(extra) / 10;
    rows.push({
      name: `sampling's CPU with ${JOBS} running jobs: the daemon's CPU beyond one with --metrics off (same windows)`,
      value: cost,
      baseline: 100,
      ratio: cost / 100,
      unit: "% of a core",
      goal: "≤ 1 % of a core",
      met: cost <= 1,
      spread: spread(extra),
      pairs: rounds,
    });
    const ownCost = median(own) / 10;
    rows.push({
      name: `the sampler's own figure for it (hotline_metrics_sampling_seconds_total), ${JOBS} running jobs`,
      value: ownCost,
      baseline: 100,
      ratio: ownCost / 100,
      unit: "% of a core",
      goal: "(no goal: a cross-check)",
      met: undefined,
      spread: spread(own),
      pairs: rounds,
    });
    // 2. state.info p99, sampling on vs off, interleaved in rounds; the row is the median round.
    const ratios: number[] = [];
    const p99s: Array<[number, number]> = [];
    for (let r = 0; r < rounds; r++) {
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < 1000; i++) {
        for (const [daemon, into] of (i % 2
          ? [
              [off, b],
              [on, a],
            ]
          : [
              [on, a],
              [off, b],
            ]) as Array<[BenchDaemon, number[]]>) {
          const t = performance.now();
          await daemon.client.request("state.info");
          into.push(performance.now() - t);
        }
      }
      p99s.push([quantile(a, 0.99), quantile(b, 0.99)]);
      ratios.push(quantile(a, 0.99) / quantile(b, 0.99));
    }
    const ratio = median(ratios);
    rows.push({
      name: `state.info p99 with sampling on vs off (${JOBS} running jobs each, 1,000 interleaved pairs a round)`,
      value: median(p99s.map((p) => p[0])),
      baseline: median(p99s.map((p) => p[1])),
      ratio,
      unit: "ms",
      goal: "0.90–1.10x",
      met: ratio >= 0.9 && ratio <= 1.1,
      spread: [quantile(ratios, 0.25), quantile(ratios, 0.75)],
      pairs: rounds,
    });
  } finally {
    await cancelAll(on, onJobs);
    await cancelAll(off, offJobs);
  }
  // 3. One job of 10,000 processes: the sampler keeps to its budget by sampling less often.
  const dir = mkdtempSync(join(tmpdir(), "hotline-bench-forker-"));
  try {
    writeFileSync(
      join(dir, "forker.c"),
      "#include <stdlib.h>\n#include <unistd.h>\nint main(int c, char **v) { for (int i = atoi(v[1]); i > 0; i--) if (fork() == 0) { pause(); _exit(0); } pause(); }\n",
    );
    if (spawnSync("cc", ["-O2", "-o", join(dir, "forker"), join(dir, "forker.c")]).status === 0) {
      const [job] = await startJobs(on, 1, [join(dir, "forker"), "10000"]);
      for (let i = 0; i < 600; i++) {
        const status = await on.client.request("jobs.status", { job: job! });
        if ((status.usage?.processes ?? 0) >= 10_001) break;
        await sleep(500);
      }
      const [a0, s0] = [processCpuMs(on.proc.pid!), await samplerMs(on)];
      const t0 = performance.now();
      await sleep(30_000);
      const seconds = (performance.now() - t0) / 1000;
      const [a1, s1] = [processCpuMs(on.proc.pid!), await samplerMs(on)];
      const sampler = (s1 - s0) / seconds / 10;
      rows.push({
        name: "one job of 10,000 processes: the sampler's CPU (its own figure; the daemon's whole CPU as baseline), over 30 s",
        value: sampler,
        baseline: (a1 - a0) / seconds / 10,
        ratio: sampler / 100,
        unit: "% of a core",
        goal: "≤ 1 % of a core over time (its budget)",
        met: sampler <= 1.1,
      });
      await cancelAll(on, [job!]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await on.stop();
    await off.stop();
  }
  return rows;
}

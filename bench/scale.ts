import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BenchDaemon, type BenchRow, pairRow, samplePairs, startBenchDaemon } from "./common.js";
import { sourceTree } from "./fs.js";

const run = promisify(execFile);
const NO_GOAL = "(no goal: how it grows)";

/**
 * `npm run bench scale`: how the daemon grows (rows without goals, issue 28). jobs.list with 100,
 * 1,000 and 10,000 retained jobs against a state.info round trip; 64 followers of one finished
 * job at once against one (aggregate MiB/s); files.search on a 10,000-file tree against git grep.
 */
export async function scaleBenchmarks(options: { runs?: number } = {}): Promise<BenchRow[]> {
  const runs = options.runs ?? (Number(process.env.HOTLINE_BENCH_RUNS) || 15);
  const rows: BenchRow[] = [];
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-scale-"));
  const daemon = await startBenchDaemon({}, ["--retain-jobs", "20000", "--max-connections", "1000"]);
  try {
    rows.push(...(await jobsListRows(daemon, runs)));
    rows.push(await followersRow(daemon, Math.max(3, Math.round(runs / 3))));
    rows.push(await searchRow(daemon, work, runs));
  } finally {
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/** Starts `count` more `true` jobs, 100 at a time, and waits for them all. */
async function addJobs(daemon: BenchDaemon, count: number): Promise<void> {
  for (let done = 0; done < count; done += 100) {
    const batch = Array.from({ length: Math.min(100, count - done) }, () =>
      daemon.client.request("shell", { command: "true", wait: 60_000 }),
    );
    await Promise.all(batch);
  }
}

async function jobsListRows(daemon: BenchDaemon, runs: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let have = 0;
  for (const retained of [100, 1000, 10_000]) {
    await addJobs(daemon, retained - have);
    have = retained;
    const samples = await samplePairs(
      runs,
      2,
      () => daemon.client.request("jobs.list", {}),
      () => daemon.client.request("state.info", {}),
    );
    rows.push(
      pairRow(`jobs.list (20 newest) with ${retained.toLocaleString("en")} retained jobs vs state.info`, samples, NO_GOAL, () => undefined),
    );
  }
  return rows;
}

/** Follows job `id` to its end on `count` connections at once; resolves with the bytes each got. */
async function follow(daemon: BenchDaemon, id: string, count: number, expect: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async () => {
      let got = 0;
      for await (const event of daemon.client.job(id).follow({ binary: true })) if (event.event === "job.output") got += event.bytes.length;
      if (got !== expect) throw new Error(`a follower got ${got} of ${expect} bytes`);
    }),
  );
}

async function followersRow(daemon: BenchDaemon, runs: number): Promise<BenchRow> {
  const mib = 16;
  const { job } = await daemon.client.request("shell", { command: `head -c ${mib * 1024 * 1024} /dev/zero`, wait: 60_000 });
  if (job.state !== "succeeded") throw new Error(`the output job ended ${job.state}`);
  const bytes = mib * 1024 * 1024;
  const followers = 64;
  const samples = await samplePairs(
    runs,
    1,
    () => follow(daemon, job.id, followers, bytes),
    () => follow(daemon, job.id, 1, bytes),
  );
  // Both sides as aggregate MiB/s: 64 × 16 MiB in the time of one side, 16 MiB in the other's.
  const many = samples.a.map((ms) => (followers * mib) / (ms / 1000));
  const one = samples.b.map((ms) => mib / (ms / 1000));
  const ratios = many.map((m, i) => m / one[i]!);
  const row = pairRow(
    `${followers} followers of one finished ${mib} MiB job, aggregate MiB/s vs one follower`,
    samples,
    NO_GOAL,
    () => undefined,
  );
  const sorted = [...ratios].sort((x, y) => x - y);
  const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return {
    ...row,
    value: mid(many),
    baseline: mid(one),
    unit: "MiB/s",
    ratio: mid(ratios),
    spread: [sorted[Math.floor((sorted.length - 1) * 0.25)]!, sorted[Math.ceil((sorted.length - 1) * 0.75)]!],
  };
}

async function searchRow(daemon: BenchDaemon, work: string, runs: number): Promise<BenchRow> {
  const repo = join(work, "repo");
  mkdirSync(repo);
  sourceTree(repo, 250); // 250 × 40 = 10,000 files
  await run("git", ["init", "-q"], { cwd: repo });
  await run("git", ["add", "."], { cwd: repo });
  const pattern = "rare marker";
  const samples = await samplePairs(
    runs,
    2,
    async () => {
      const r = await daemon.client.request("files.search", { path: repo, pattern, maxResults: 10000 });
      if (r.matches.length !== 250 || r.more) throw new Error(`files.search found ${r.matches.length}`);
    },
    () =>
      run("git", ["grep", "--untracked", "-n", "--column", "-z", "-I", "-F", "-e", pattern], { cwd: repo, maxBuffer: 64 * 1024 * 1024 }),
  );
  return pairRow("files.search 10,000 files (2M lines), 250 matches vs git grep", samples, NO_GOAL, () => undefined);
}

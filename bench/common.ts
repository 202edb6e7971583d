import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { HotlineClient } from "../client/index.js";
import { DAEMON_NODE_FLAGS } from "../daemon/node-flags.js";

/** One row of the benchmark table: a measured value against a baseline measured in the same run. */
export interface BenchRow {
  name: string;
  value: number;
  baseline: number;
  /** value / baseline (for throughputs: our throughput / baseline throughput). */
  ratio: number;
  unit: string;
  goal: string;
  /** Undefined for a row reported without a goal. */
  met: boolean | undefined;
  /** For interleaved pairs: the 25th and 75th percentile of the per-pair ratios (the spread). */
  spread?: [number, number];
  /** How many interleaved pairs the medians come from. */
  pairs?: number;
}

export const ROOT = new URL("../../", import.meta.url).pathname;

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The q-quantile (0..1) of `xs`, by nearest rank. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))]!;
}

/**
 * Times two operations in `n` interleaved pairs after `warmup` pairs, alternating which goes
 * first, so drift in the machine's load hits both alike; returns every sample in milliseconds.
 * An operation that resolves with a number reports its own duration (to leave set-up or clean-up out).
 */
export async function samplePairs(
  n: number,
  warmup: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a: number[]; b: number[] }> {
  const as: number[] = [];
  const bs: number[] = [];
  const time = async (fn: () => Promise<unknown>, into: number[]): Promise<void> => {
    const t = performance.now();
    const own = await fn();
    into.push(typeof own === "number" ? own : performance.now() - t);
  };
  for (let i = 0; i < warmup + n; i++) {
    const keep = i >= warmup;
    const [first, second] = i % 2 ? [b, a] : [a, b];
    const [intoFirst, intoSecond] = i % 2 ? [bs, as] : [as, bs];
    await time(first, keep ? intoFirst : []);
    await time(second, keep ? intoSecond : []);
  }
  return { a: as, b: bs };
}

/**
 * A row from interleaved pairs: the medians of both sides, and the median and p25–p75 spread of the
 * per-pair ratios. For times the ratio is ours / baseline; with `throughputMiB` set, both sides moved
 * that many MiB and the values are MiB/s, the ratio baseline time / our time (higher is better).
 */
export function pairRow(
  name: string,
  samples: { a: number[]; b: number[] },
  goal: string,
  met: (ratio: number) => boolean | undefined,
  throughputMiB?: number,
): BenchRow {
  const ratios = samples.a.map((ours, i) => (throughputMiB ? samples.b[i]! / ours : ours / samples.b[i]!));
  const ratio = median(ratios);
  const toValue = (ms: number): number => (throughputMiB ? throughputMiB / (ms / 1000) : ms);
  return {
    name,
    value: toValue(median(samples.a)),
    baseline: toValue(median(samples.b)),
    ratio,
    unit: throughputMiB ? "MiB/s" : "ms",
    goal,
    met: met(ratio),
    spread: [quantile(ratios, 0.25), quantile(ratios, 0.75)],
    pairs: ratios.length,
  };
}

/** Times `fn` `n` times after `warmup` runs; returns the median in milliseconds. */
export async function timeMedian(n: number, warmup: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

/** The medians (ms) of samplePairs, for rows that need no spread; what the operations resolve with is ignored. */
export async function timePairs(
  n: number,
  warmup: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<[number, number]> {
  const samples = await samplePairs(
    n,
    warmup,
    async () => void (await a()),
    async () => void (await b()),
  );
  return [median(samples.a), median(samples.b)];
}

/**
 * The daemon the suites start: this checkout's, or HOTLINE_BENCH_DAEMON (another build's
 * dist/daemon/main.js), to compare two builds with the same bench code and floors.
 */
export const BENCH_DAEMON_MAIN = process.env.HOTLINE_BENCH_DAEMON || join(ROOT, "dist/daemon/main.js");

export interface BenchDaemon {
  proc: ChildProcess;
  client: HotlineClient;
  url: string;
  token: string;
  dir: string;
  rssBytes(): number;
  stop(): Promise<void>;
}

/** A real daemon process on a free loopback port with throwaway directories. */
export async function startBenchDaemon(
  extraEnv: Record<string, string> = {},
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<BenchDaemon> {
  const dir = mkdtempSync(join(tmpdir(), "hotline-bench-"));
  const env = {
    ...process.env,
    HOME: dir,
    HOTLINE_STATE_DIR: join(dir, "state"),
    HOTLINE_CONFIG_DIR: join(dir, "config"),
    HOTLINE_CACHE_DIR: join(dir, "cache"),
    HOTLINE_SYSTEM_CONFIG_DIR: join(dir, "etc"),
    HOTLINE_LOG_LEVEL: "warn",
    ...extraEnv,
  };
  const proc = spawn(
    process.execPath,
    [...DAEMON_NODE_FLAGS, ...nodeArgs, BENCH_DAEMON_MAIN, "--port", "0", "--log-level", "info", ...args],
    { env, stdio: ["ignore", "ignore", "pipe"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stderr! }).on("line", (line) => {
      try {
        const rec = JSON.parse(line) as { msg?: string; url?: string };
        if (rec.msg === "listening" && rec.url) resolve(rec.url);
      } catch {
        // not JSON
      }
    });
    proc.once("exit", (code) => reject(new Error(`daemon exited ${code}`)));
  });
  const token = readFileSync(join(dir, "config", "token"), "utf8").trim();
  const client = await HotlineClient.connect({ url, token });
  return {
    proc,
    client,
    url,
    token,
    dir,
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))![1]) * 1024,
    stop: async () => {
      await client.close();
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function row(
  name: string,
  value: number,
  baseline: number,
  unit: string,
  goal: string,
  met: (ratio: number) => boolean,
  ratio = value / baseline,
): BenchRow {
  return { name, value, baseline, ratio, unit, goal, met: met(ratio) };
}

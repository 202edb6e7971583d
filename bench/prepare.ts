// Benchmarks of prepare: a cached prepare round trip against `nix print-dev-env` on the same flake,
// and job spawn with a prepared environment against without. Needs a built tree (dist/) and nix.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HotlineClient } from "../client/index.js";
import type { JobStatus } from "../protocol/common.js";
import { type BenchRow, median, ROOT, startBenchDaemon } from "./common.js";

async function waitJob(client: HotlineClient, id: string): Promise<JobStatus> {
  const { job } = await client.request("jobs.wait", { job: id, timeoutMs: 120_000 });
  return job;
}

/** Runs both prepare benchmarks; rows for the lead's bench runner. */
export async function benchPrepare(options: { iterations?: number; nixpkgs?: string } = {}): Promise<BenchRow[]> {
  const nixpkgs = options.nixpkgs ?? `path:${join(ROOT, "test/fixtures/nixpkgs-standin")}`;
  const n = options.iterations ?? 200;
  const dir = mkdtempSync(join(tmpdir(), "hotline-bench-prepare-"));
  const ws = join(dir, "ws");
  const plain = join(dir, "plain");
  mkdirSync(ws);
  mkdirSync(plain);
  const daemon = await startBenchDaemon({ HOTLINE_NIXPKGS: nixpkgs });
  try {
    const { client } = daemon;
    const params = { workspace: ws, packages: ["hello-a", "tools.greeter", "hooked"] };
    const first = await client.request("prepare", params);
    if (!first.ready) {
      const job = await waitJob(client, first.job!.id);
      if (job.state !== "succeeded") throw new Error(`bench prepare failed: ${JSON.stringify(job.error)}`);
    }
    // Cached round trip.
    const hits: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      const r = await client.request("prepare", params);
      hits.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (!r.ready) throw new Error("cached prepare was not ready");
    }
    // The same flake evaluated by Nix (everything already in the store).
    const flake = `path:${join(ws, ".hotline/nix")}`;
    const nixRuns: number[] = [];
    for (let i = 0; i < 7; i++) {
      const t = process.hrtime.bigint();
      execFileSync("nix", ["print-dev-env", "--json", "--no-update-lock-file", flake], { stdio: ["ignore", "ignore", "ignore"] });
      nixRuns.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    // Job spawn with and without a prepared environment, interleaved to share machine noise.
    const spawnWith: number[] = [];
    const spawnWithout: number[] = [];
    const shell = async (cwd: string) => {
      const t = process.hrtime.bigint();
      const r = await client.request("shell", { command: ["true"], cwd, wait: 30_000 });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (r.job.state !== "succeeded") throw new Error(`spawn bench job ${r.job.state}`);
      return ms;
    };
    for (let i = 0; i < 5; i++) await shell(ws), await shell(plain);
    for (let i = 0; i < Math.max(30, n / 4); i++) {
      spawnWith.push(await shell(ws));
      spawnWithout.push(await shell(plain));
    }
    const hit = median(hits);
    const pde = median(nixRuns);
    const withEnv = median(spawnWith);
    const without = median(spawnWithout);
    return [
      { name: "prepare: cached round trip vs nix print-dev-env", value: hit, baseline: pde, ratio: hit / pde, unit: "ms", goal: "<= 5 ms and >= 50x faster", met: hit <= 5 && pde / hit >= 50 },
      { name: "job spawn with a prepared environment vs without", value: withEnv, baseline: without, ratio: withEnv / without, unit: "ms", goal: "<= 1.1x", met: withEnv / without <= 1.1 },
    ];
  } finally {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

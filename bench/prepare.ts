// Benchmarks of prepare: a cached prepare round trip against `nix print-dev-env` on the same flake,
// and job spawn with a prepared environment against without. Needs a built tree (dist/) and nix.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HotlineClient } from "../client/index.js";
import { nixArgs } from "../daemon/runners/nix-cli.js";
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
      execFileSync("nix", nixArgs(["print-dev-env", "--json", "--no-update-lock-file", flake]), { stdio: ["ignore", "ignore", "ignore"] });
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
    for (let i = 0; i < 5; i++) {
      await shell(ws);
      await shell(plain);
    }
    for (let i = 0; i < Math.max(30, n / 4); i++) {
      spawnWith.push(await shell(ws));
      spawnWithout.push(await shell(plain));
    }
    const hit = median(hits);
    const pde = median(nixRuns);
    const withEnv = median(spawnWith);
    const without = median(spawnWithout);
    return [
      ...(await benchBinaryCache(join(dir, "bincache"))),
      {
        name: "prepare: cached round trip vs nix print-dev-env",
        value: hit,
        baseline: pde,
        ratio: hit / pde,
        unit: "ms",
        goal: "<= 5 ms and >= 50x faster",
        met: hit <= 5 && pde / hit >= 50,
      },
      {
        name: "job spawn with a prepared environment vs without",
        value: withEnv,
        baseline: without,
        ratio: withEnv / without,
        unit: "ms",
        goal: "<= 1.1x",
        met: withEnv / without <= 1.1,
      },
    ];
  } finally {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prepares once on a fresh daemon and returns the job's duration in ms and its result. */
async function timedPrepare(env: Record<string, string>, packages: string[]): Promise<{ ms: number; result: Record<string, any> }> {
  const daemon = await startBenchDaemon(env);
  try {
    const ws = join(daemon.dir, "ws");
    mkdirSync(ws);
    const t = process.hrtime.bigint();
    const reply = await daemon.client.request("prepare", { workspace: ws, packages });
    const job = await waitJob(daemon.client, reply.job!.id);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (job.state !== "succeeded") throw new Error(`bench prepare failed: ${JSON.stringify(job.error)}`);
    return { ms, result: job.result as Record<string, any> };
  } finally {
    await daemon.stop();
  }
}

/**
 * A second sandbox's prepare through the binary cache against building the same recipe: each
 * round uses a stand-in with its own release (store paths nobody else has), builds it on daemon
 * A, publishes it (signed, file://), deletes the paths, and prepares it again on daemon B with the
 * cache as substituter. Both timings are whole prepare jobs seen from the client.
 */
async function benchBinaryCache(dir: string, rounds = 3): Promise<BenchRow[]> {
  mkdirSync(dir, { recursive: true });
  const nix = (args: string[]) => execFileSync("nix", nixArgs(args), { stdio: ["ignore", "pipe", "ignore"], encoding: "utf8" });
  execFileSync("nix-store", ["--generate-binary-cache-key", "hotline-bench-1", join(dir, "sec"), join(dir, "pub")]);
  const publicKey = execFileSync("cat", [join(dir, "pub")], { encoding: "utf8" }).trim();
  const packages = ["hello-a", "hello-b", "blob"];
  const built: number[] = [];
  const substituted: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const standin = join(dir, `standin-${i}`);
    cpSync(join(ROOT, "test/fixtures/nixpkgs-standin"), standin, { recursive: true });
    writeFileSync(join(standin, "release"), `bench-${process.pid}-${Date.now()}-${i}\n`);
    const cache = join(dir, `cache-${i}`);
    const a = await timedPrepare({ HOTLINE_NIXPKGS: `path:${standin}` }, packages);
    if (a.result.closure?.arrived !== "built") throw new Error(`round ${i}: expected a build, got ${JSON.stringify(a.result.closure)}`);
    const storePath = String(a.result.environment.storePath);
    const closure = nix(["path-info", "--recursive", storePath]).trim().split("\n");
    execFileSync("nix", nixArgs(["copy", "--to", `file://${cache}?secret-key=${join(dir, "sec")}`, storePath]), { stdio: "ignore" });
    // Daemon A's roots went with its directories: drop what only this release made, referrers first.
    for (const p of closure.filter((p) => !p.endsWith("-standin-stdenv")).reverse())
      spawnSync("nix", nixArgs(["store", "delete", p]), { stdio: "ignore" });
    const b = await timedPrepare(
      { HOTLINE_NIXPKGS: `path:${standin}`, HOTLINE_CACHE_SUBSTITUTERS: `file://${cache}`, HOTLINE_CACHE_TRUSTED_PUBLIC_KEYS: publicKey },
      packages,
    );
    // The check that matters: the second sandbox built nothing.
    if (b.result.closure?.arrived !== "substituted" || b.result.closure?.built !== 0)
      throw new Error(`round ${i}: expected substitution, got ${JSON.stringify(b.result.closure)}`);
    built.push(a.ms);
    substituted.push(b.ms);
  }
  const value = median(substituted);
  const baseline = median(built);
  return [
    // Stand-in builds take milliseconds, so offline the cache cannot win on time; it must not lose much.
    {
      name: "prepare in a second sandbox via the binary cache (0 builds) vs building (stand-in, 3 MB closure)",
      value,
      baseline,
      ratio: value / baseline,
      unit: "ms",
      goal: "<= 1.2x (0 builds checked)",
      met: value / baseline <= 1.2,
    },
  ];
}

// Benchmarks of prepare: a cached prepare round trip against `nix print-dev-env` on the same flake,
// and job spawn with a prepared environment against without. Needs a built tree (dist/) and nix.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { HotlineClient } from "../cli/client.js";

export interface BenchRow {
  name: string;
  value: number;
  baseline: number;
  ratio: number;
  goal: string;
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("repository root not found");
    dir = parent;
  }
  return dir;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

async function startDaemon(root: string, dir: string, nixpkgs: string): Promise<{ client: HotlineClient; stop(): Promise<void> }> {
  const env = { ...process.env, HOME: dir, HOTLINE_STATE_DIR: join(dir, "state"), HOTLINE_CONFIG_DIR: join(dir, "config"), HOTLINE_CACHE_DIR: join(dir, "cache"), HOTLINE_SYSTEM_CONFIG_DIR: join(dir, "etc"), HOTLINE_NIXPKGS: nixpkgs };
  const proc = spawn(process.execPath, [join(root, "dist/daemon/main.js"), "--port", "0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stderr! }).on("line", (line) => {
      try {
        const r = JSON.parse(line) as { msg?: string; url?: string };
        if (r.msg === "listening" && r.url) resolve(r.url);
      } catch {
        /* not JSON */
      }
    });
    proc.once("exit", (code) => reject(new Error(`daemon exited (${code})`)));
  });
  const token = readFileSync(join(dir, "config", "token"), "utf8").trim();
  const client = await HotlineClient.connect(url, token);
  return {
    client,
    stop: () =>
      new Promise((resolve) => {
        client.close();
        proc.once("exit", () => resolve());
        proc.kill("SIGTERM");
      }),
  };
}

async function waitJob(client: HotlineClient, id: string): Promise<Record<string, unknown>> {
  const { job } = await client.request<{ job: Record<string, unknown> }>("jobs.wait", { job: id, timeoutMs: 120_000 });
  return job;
}

/** Runs both prepare benchmarks; rows for the lead's bench runner. */
export async function benchPrepare(options: { iterations?: number; nixpkgs?: string } = {}): Promise<BenchRow[]> {
  const root = repoRoot();
  const nixpkgs = options.nixpkgs ?? `path:${join(root, "test/fixtures/nixpkgs-standin")}`;
  const n = options.iterations ?? 200;
  const dir = mkdtempSync(join(tmpdir(), "hotline-bench-prepare-"));
  const ws = join(dir, "ws");
  const plain = join(dir, "plain");
  mkdirSync(ws);
  mkdirSync(plain);
  const daemon = await startDaemon(root, dir, nixpkgs);
  try {
    const { client } = daemon;
    const params = { workspace: ws, packages: ["hello-a", "tools.greeter", "hooked"] };
    const first = await client.request<{ ready: boolean; job?: { id: string } }>("prepare", params);
    if (!first.ready) {
      const job = await waitJob(client, first.job!.id);
      if (job.state !== "succeeded") throw new Error(`bench prepare failed: ${JSON.stringify(job.error)}`);
    }
    // Cached round trip.
    const hits: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      const r = await client.request<{ ready: boolean }>("prepare", params);
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
      const r = await client.request<{ job: { state: string } }>("shell", { command: ["true"], cwd, wait: 30_000 });
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
      { name: "prepare: cached round trip vs nix print-dev-env (ms, median)", value: round(hit), baseline: round(pde), ratio: round(pde / hit, 1), goal: "value ≤ 5 ms and ratio (speed-up) ≥ 50" },
      { name: "job spawn with a prepared environment vs without (ms, median)", value: round(withEnv), baseline: round(without), ratio: round(withEnv / without, 3), goal: "ratio ≤ 1.1" },
    ];
  } finally {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  benchPrepare().then((rows) => console.table(rows), (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

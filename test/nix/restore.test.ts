// A prepared environment whose store paths are gone (what a new container on a kept home sees: the
// image's fresh /nix) is copied back from the binary cache it was pushed to, not built again.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NixPreparer } from "../../daemon/nix/preparer.js";
import { CLI_MAIN, type TestClient, type TestDaemon, withDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { recordingContext, scratchDirs, serveDir, standinCopy, SYSTEM } from "./helpers.js";

const hasNix = toolAvailable("nix");

/** A prepare that must start a job, waited for in the request; the ended job. */
async function prepareJob(client: TestClient, params: Record<string, unknown>) {
  const reply = await client.ok("prepare", { ...params, wait: 90_000 }, 100_000);
  expect(reply).toMatchObject({ ready: false, job: { kind: "prepare" } });
  return reply.job;
}

/**
 * Makes the store lose an environment as a fresh /nix would: every GC root under the cache
 * directory goes, then the environment's closure and its flake inputs are deleted — except the
 * stand-in's stdenv, which every release shares with other tests. Returns the deleted paths.
 */
function loseFromStore(cacheDir: string, key: string, storePath: string): string[] {
  const meta = JSON.parse(readFileSync(join(cacheDir, "environments", SYSTEM, key, "meta.json"), "utf8")) as { inputs?: string[] };
  const closure = execFileSync("nix-store", ["-qR", storePath], { encoding: "utf8" }).trim().split("\n");
  const ours = [...closure, ...(meta.inputs ?? [])].filter((p) => !p.endsWith("-standin-stdenv"));
  rmSync(join(cacheDir, "gcroots"), { recursive: true, force: true });
  // Referrers first (nix-store -qR lists dependencies before what uses them); a path still alive elsewhere stays.
  for (const p of [...ours].reverse()) spawnSync("nix-store", ["--delete", p], { stdio: "ignore" });
  for (const p of ours) expect(existsSync(p), `${p} should have been deleted`).toBe(false);
  return ours;
}

async function prepareJobs(client: TestClient): Promise<string[]> {
  const { jobs } = await client.ok("jobs.list", { limit: 1000 });
  return jobs.filter((j: { kind: string }) => j.kind === "prepare").map((j: { id: string }) => j.id);
}

describe.skipIf(!hasNix)("prepare restores an environment the store lost from the binary cache (real nix, file:// cache)", () => {
  const { fresh, track, cleanup } = scratchDirs();
  afterAll(cleanup);

  /** A daemon pushing to a fresh file:// cache, with a stand-in of its own release (store paths no other test shares). */
  async function withCachingDaemon(fn: (daemon: TestDaemon, client: TestClient, t: { cache: string; release: string }) => Promise<void>) {
    const standin = track(standinCopy(`restore-${process.pid}-${Date.now()}`));
    const release = readFileSync(join(standin, "release"), "utf8").trim();
    const cache = fresh("restore-cache");
    await withDaemon(
      { env: { HOTLINE_NIXPKGS: `path:${standin}`, HOTLINE_CACHE_PUSH: `file://${cache}?compression=zstd` } },
      (daemon, client) => fn(daemon, client, { cache, release }),
    );
  }

  it("prepare, the store paths deleted, prepare again: ready: true, restored from the cache, nothing built, rooted again; a job sees the environment", async () => {
    await withCachingDaemon(async (daemon, client, { cache, release }) => {
      const ws = fresh("ws-restore");
      const first = await prepareJob(client, { workspace: ws, packages: ["hello-a"] });
      expect(first.state, JSON.stringify(first.error)).toBe("succeeded");
      expect(first.result.closure).toMatchObject({ arrived: "built" });
      expect(first.result.publication).toMatchObject({ published: true, to: `file://${cache}?compression=zstd` });
      const { storePath, cacheKey } = first.result.environment as { storePath: string; cacheKey: string };
      const lost = loseFromStore(daemon.dirs.cache, cacheKey, storePath);
      const listed = (await client.ok("cache.list")).entries.find((e: { cacheKey: string }) => e.cacheKey === cacheKey);
      expect(listed).toMatchObject({ valid: false });
      const jobsBefore = await prepareJobs(client);
      const spec = () => JSON.parse(readFileSync(join(ws, ".hotline/environment-spec.json"), "utf8")) as { createdAt: string };
      const createdAt = spec().createdAt;

      const again = await client.ok("prepare", { workspace: ws, packages: ["hello-a"] }, 60_000);
      expect(again).toMatchObject({ ready: true, restored: { from: `file://${cache}?compression=zstd` } });
      expect(again.job).toBeUndefined();
      expect(again.environment).toMatchObject({ storePath, cacheKey });
      expect(again.restored.paths).toBeGreaterThanOrEqual(lost.length);
      for (const p of lost) expect(existsSync(p), `${p} was not restored`).toBe(true);
      // No prepare job ran: nothing was evaluated or built; the definition is the one it was.
      expect(spec().createdAt).toBe(createdAt);
      expect(await prepareJobs(client)).toEqual(jobsBefore);
      // Rooted again: a garbage collection keeps it.
      expect(readlinkSync(join(daemon.dirs.cache, "gcroots", SYSTEM, cacheKey))).toBe(storePath);
      const dead = execFileSync("nix-store", ["--gc", "--print-dead"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
      for (const p of lost) expect(dead, `${p} is not rooted`).not.toContain(p);

      const run = await client.ok("shell", { command: "hello-a", cwd: ws, wait: 30_000 });
      expect(run.output.data).toBe(`hello-a from standin ${release}\n`);
      // Valid again: a plain cache hit, nothing to restore.
      const third = await client.ok("prepare", { workspace: ws });
      expect(third.ready).toBe(true);
      expect(third.restored).toBeUndefined();

      // The CLI says so too.
      loseFromStore(daemon.dirs.cache, cacheKey, storePath);
      const cli = spawnSync(process.execPath, [CLI_MAIN, "prepare", "--workspace", ws], { env: daemon.cliEnv, encoding: "utf8" });
      expect(cli.status, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(
        new RegExp(`^ready: ${ws} .*; restored \\d+ store path\\(s\\) from file://${cache}\\?compression=zstd, nothing built\n$`),
      );
      expect(await prepareJobs(client)).toEqual(jobsBefore);
    });
  });

  it("when the cache lacks them, prepare falls back to a job that builds, and its output says why", async () => {
    await withCachingDaemon(async (daemon, client, { cache, release }) => {
      const ws = fresh("ws-fallback");
      const first = await prepareJob(client, { workspace: ws, packages: ["hello-b"] });
      expect(first.state, JSON.stringify(first.error)).toBe("succeeded");
      const { storePath, cacheKey } = first.result.environment as { storePath: string; cacheKey: string };
      loseFromStore(daemon.dirs.cache, cacheKey, storePath);
      rmSync(cache, { recursive: true, force: true });

      const job = await prepareJob(client, { workspace: ws, packages: ["hello-b"] });
      expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
      expect(job.result.closure).toMatchObject({ arrived: "built" });
      expect(job.result.restored).toBeUndefined();
      expect((await client.ok("jobs.output", { job: job.id })).data).toContain(
        "the store lost this environment and restoring it from the binary cache failed",
      );
      const run = await client.ok("shell", { command: "hello-b", cwd: ws, wait: 30_000 });
      expect(run.output.data).toBe(`hello-b from standin ${release}\n`);
    });
  });

  it("a prepare job that finds the environment lost restores it instead of building (closure arrived: restored)", async () => {
    const standin = track(standinCopy(`restore-job-${process.pid}-${Date.now()}`));
    const state = fresh("state");
    const cacheDir = fresh("cachedir");
    const cache = fresh("restore-cache");
    const prep = new NixPreparer({
      stateDir: state,
      cacheDir,
      defaultNixpkgs: `path:${standin}`,
      system: SYSTEM,
      daemonVersion: "0.1.0-test",
      binaryCache: { push: `file://${cache}`, substituters: [], trustedPublicKeys: [] },
    });
    const ws = fresh("ws-job");
    const req = { workspace: ws, packages: ["tools.greeter"] };
    const first = await prep.run(req, ws, recordingContext().ctx);
    expect(first.closure.arrived).toBe("built");
    const lost = loseFromStore(cacheDir, first.environment.cacheKey, first.environment.storePath);
    const plan = prep.plan(req, ws);
    expect(plan.ready).toBe(false);
    expect(!plan.ready && plan.restorable?.meta.key).toBe(first.environment.cacheKey);

    const rec = recordingContext();
    const again = await prep.run(req, ws, rec.ctx);
    expect(again.closure).toEqual({ arrived: "restored", built: 0, substituted: 0 });
    expect(again.restored).toMatchObject({ from: `file://${cache}` });
    expect(again.restored!.paths).toBeGreaterThanOrEqual(lost.length);
    expect(rec.output()).toContain(`from file://${cache}; nothing built`);
    expect(rec.progress.map((p) => p.phase)).toContain("restoring");
    expect(prep.plan(req, ws).ready).toBe(true);
  });
  it("from a store that is not a file:// directory, a restore checks signatures: unsigned by a trusted key it builds, signed by one it restores", async () => {
    const standin = track(standinCopy(`restore-sig-${process.pid}-${Date.now()}`));
    const keys = fresh("keys");
    execFileSync("nix-store", ["--generate-binary-cache-key", "hotline-restore-1", join(keys, "sec"), join(keys, "pub")]);
    const publicKey = readFileSync(join(keys, "pub"), "utf8").trim();
    const cache = fresh("restore-cache");
    const server = await serveDir(cache);
    const served = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const settings = {
        stateDir: fresh("state"),
        cacheDir: fresh("cachedir"),
        defaultNixpkgs: `path:${standin}`,
        system: SYSTEM,
        daemonVersion: "0.1.0-test",
      };
      const push = { push: `file://${cache}`, secretKeyFile: join(keys, "sec"), substituters: [] };
      const ws = fresh("ws-sig");
      const req = { workspace: ws, packages: ["hello-a"] };
      /** Loses the environment and makes its entry name the cache as served over HTTP (a remote cache). */
      const loseToRemote = (key: string, storePath: string) => {
        loseFromStore(settings.cacheDir, key, storePath);
        const metaFile = join(settings.cacheDir, "environments", SYSTEM, key, "meta.json");
        const meta = JSON.parse(readFileSync(metaFile, "utf8"));
        writeFileSync(metaFile, JSON.stringify({ ...meta, publication: { ...meta.publication, to: served } }));
      };
      const untrusting = new NixPreparer({ ...settings, binaryCache: { ...push, trustedPublicKeys: [] } });
      const first = await untrusting.run(req, ws, recordingContext().ctx);
      expect(first.publication).toMatchObject({ published: true, signed: true });
      loseToRemote(first.environment.cacheKey, first.environment.storePath);
      const rec = recordingContext();
      const rebuilt = await untrusting.run(req, ws, rec.ctx);
      expect(rebuilt.closure.arrived, rec.output()).toBe("built");
      // The rebuild published again (its flake inputs too): the last phase can restore only from a publication that worked.
      expect(rebuilt.publication, rec.output()).toMatchObject({ published: true, signed: true });
      expect(rec.output()).toMatch(/restoring it from the binary cache failed \(.*lacks a valid signature/);

      loseToRemote(rebuilt.environment.cacheKey, rebuilt.environment.storePath);
      const trusting = new NixPreparer({ ...settings, binaryCache: { ...push, trustedPublicKeys: [publicKey] } });
      const restoring = recordingContext();
      const restored = await trusting.run(req, ws, restoring.ctx);
      expect(restored.closure.arrived, restoring.output()).toBe("restored");
      expect(restored.restored).toMatchObject({ from: served });
    } finally {
      server.close();
    }
  });
});

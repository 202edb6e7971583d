import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_MAIN, newDirs, TestDaemon, withDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, standinCopy, STANDIN_REF, SYSTEM, tempDir } from "./helpers.js";

const hasNix = toolAvailable("nix");

/** Prepares and waits for the job; returns the finished job status. */
async function prepareJob(client: TestClient, params: Record<string, unknown>) {
  const reply = await client.ok("prepare", params, 60_000);
  expect(reply.ready).toBe(false);
  const { job } = await client.ok("jobs.wait", { job: reply.job.id, timeoutMs: 90_000 }, 100_000);
  return job;
}

/** Removes store paths that nothing roots any more, referrers first (`paths` as nix-store -qR lists them); paths still alive elsewhere stay. */
function deleteDead(paths: string[]): void {
  for (const p of [...paths].reverse())
    spawnSync("nix", ["--extra-experimental-features", "nix-command flakes", "store", "delete", p], { stdio: "ignore" });
}

describe.skipIf(!hasNix)("prepared environments shared through a Nix binary cache (real nix, file:// cache)", () => {
  const dirs: string[] = [];
  const fresh = (prefix: string) => {
    const d = tempDir(prefix);
    dirs.push(d);
    return d;
  };
  afterAll(() => cleanup(...dirs));

  it("daemon A publishes a signed closure; daemon B (another HOME) substitutes it with 0 builds; a wrong key builds instead and says why", async () => {
    // A stand-in with its own release: store paths no other test shares, so deleting them is safe.
    const standin = standinCopy(`bincache-${process.pid}-${Date.now()}`);
    dirs.push(standin);
    const release = readFileSync(join(standin, "release"), "utf8").trim();
    const keys = fresh("keys");
    execFileSync("nix-store", ["--generate-binary-cache-key", "hotline-test-1", join(keys, "sec"), join(keys, "pub")]);
    execFileSync("nix-store", ["--generate-binary-cache-key", "hotline-other-1", join(keys, "other.sec"), join(keys, "other.pub")]);
    chmodSync(join(keys, "sec"), 0o600);
    const publicKey = readFileSync(join(keys, "pub"), "utf8").trim();
    const cache = fresh("bincache");
    const nixpkgs = `path:${standin}`;

    const published = await withDaemon(
      { env: { HOTLINE_NIXPKGS: nixpkgs, HOTLINE_CACHE_PUSH: `file://${cache}`, HOTLINE_CACHE_SECRET_KEY_FILE: join(keys, "sec") } },
      async (_a, client) => {
        const job = await prepareJob(client, { workspace: fresh("ws-a"), packages: ["hello-a"] });
        expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
        expect(job.result.closure).toMatchObject({ arrived: "built" });
        expect(job.result.closure.built).toBeGreaterThan(0);
        expect(job.result.publication).toMatchObject({ published: true, to: `file://${cache}`, signed: true });
        const catalog = await client.ok("state.catalog");
        expect(catalog.workspaces[0].publication).toMatchObject({ published: true });
        return job.result.environment.storePath as string;
      },
    );
    // Every path of the closure is in the cache, signed with our key.
    const closure = execFileSync("nix-store", ["-qR", published], { encoding: "utf8" }).trim().split("\n");
    for (const path of closure) {
      const narinfo = readFileSync(join(cache, `${path.slice("/nix/store/".length, "/nix/store/".length + 32)}.narinfo`), "utf8");
      expect(narinfo).toContain(`StorePath: ${path}`);
      expect(narinfo).toMatch(/^Sig: hotline-test-1:/m);
    }
    // The flake inputs went along (the stand-in's source).
    expect(readdirSync(cache).filter((f) => f.endsWith(".narinfo")).length).toBeGreaterThan(closure.length);

    // A's roots are gone with its directories: drop the paths only this release made.
    const ours = closure.filter((p) => !p.endsWith("-standin-stdenv"));
    deleteDead(ours);
    for (const p of ours) expect(existsSync(p), `${p} should have been deleted`).toBe(false);

    await withDaemon(
      { env: { HOTLINE_NIXPKGS: nixpkgs, HOTLINE_CACHE_SUBSTITUTERS: `file://${cache}`, HOTLINE_CACHE_TRUSTED_PUBLIC_KEYS: publicKey } },
      async (_b, client) => {
        const ws = fresh("ws-b");
        const job = await prepareJob(client, { workspace: ws, packages: ["hello-a"] });
        expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
        expect(job.result.closure).toMatchObject({ arrived: "substituted", built: 0 });
        expect(job.result.closure.substituted).toBeGreaterThanOrEqual(ours.length);
        expect(job.result.publication).toBeUndefined();
        const res = await client.ok("shell", { command: "hello-a", cwd: ws, wait: 30_000 });
        expect(res.output.data).toBe(`hello-a from standin ${release}\n`);
      },
    );

    deleteDead(ours);
    await withDaemon(
      {
        env: {
          HOTLINE_NIXPKGS: nixpkgs,
          HOTLINE_CACHE_SUBSTITUTERS: `file://${cache}`,
          HOTLINE_CACHE_TRUSTED_PUBLIC_KEYS: readFileSync(join(keys, "other.pub"), "utf8").trim(),
        },
      },
      async (_c, client) => {
        const job = await prepareJob(client, { workspace: fresh("ws-c"), packages: ["hello-a"] });
        expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
        expect(job.result.closure).toMatchObject({ arrived: "built", substituted: 0 });
        const log = await client.ok("jobs.output", { job: job.id });
        expect(log.data).toContain("is not signed by any of the keys in 'trusted-public-keys'");
      },
    );
  });

  it("a push to an unwritable destination (set in the config file) leaves the prepare succeeded with published: false and the reason", async () => {
    const daemonDirs = newDirs();
    mkdirSync(daemonDirs.config, { recursive: true });
    writeFileSync(
      join(daemonDirs.config, "config.json"),
      JSON.stringify({ environmentCache: { push: "file:///proc/hotline-no-such-cache" } }),
    );
    await withDaemon({ dirs: daemonDirs, env: { HOTLINE_NIXPKGS: STANDIN_REF } }, async (_d, client) => {
      const ws = fresh("ws-d");
      const job = await prepareJob(client, { workspace: ws, packages: ["hello-b"] });
      expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
      expect(job.result.publication).toMatchObject({ published: false, to: "file:///proc/hotline-no-such-cache" });
      expect(job.result.publication.reason.length).toBeGreaterThan(0);
      expect((await client.ok("jobs.output", { job: job.id })).data).toContain(
        "publishing to file:///proc/hotline-no-such-cache failed (the environment is prepared)",
      );
      expect((await client.ok("prepare", { workspace: ws })).ready).toBe(true);
    });
  });

  it("cache list shows entries with their users; prune --keep 0 removes every unused entry and its roots, a prepared workspace stays ready", async () => {
    await withDaemon({ env: { HOTLINE_NIXPKGS: STANDIN_REF } }, async (daemon, client) => {
      const kept = fresh("ws-kept");
      const moved = fresh("ws-moved");
      expect((await prepareJob(client, { workspace: kept, packages: ["hello-a"] })).state).toBe("succeeded");
      const first = await prepareJob(client, { workspace: moved, packages: ["hello-b"] });
      const second = await prepareJob(client, { workspace: moved, packages: ["hello-b", "tools.greeter"] });
      expect([first.state, second.state]).toEqual(["succeeded", "succeeded"]);
      const oldKey = first.result.environment.cacheKey as string;

      const { entries } = await client.ok("cache.list");
      const byKey = new Map(entries.map((e: Record<string, unknown>) => [e.cacheKey, e]));
      expect(byKey.get(oldKey)).toMatchObject({ workspaces: [], valid: true, packages: ["hello-b"] });
      expect(byKey.get(second.result.environment.cacheKey)).toMatchObject({ workspaces: [moved] });
      expect((byKey.get(oldKey) as { closureBytes: number }).closureBytes).toBeGreaterThan(0);
      const root = join(daemon.dirs.cache, "gcroots", SYSTEM, oldKey);
      expect(existsSync(root)).toBe(true);
      expect(readdirSync(`${root}.inputs`).length).toBeGreaterThan(0);

      const cli = (...args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args], { env: daemon.cliEnv, encoding: "utf8" });
      const listed = cli("cache", "list");
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`${oldKey.slice(0, 12)} .* hello-b  unused`));
      const prunedCli = cli("cache", "prune", "--keep", "0", "--json");
      expect(prunedCli.status, prunedCli.stderr).toBe(0);
      const pruned = JSON.parse(prunedCli.stdout);
      expect(pruned.removed.map((r: { cacheKey: string }) => r.cacheKey)).toEqual([oldKey]);
      expect(pruned.kept).toBe(2);
      expect(existsSync(root)).toBe(false);
      expect(existsSync(`${root}.inputs`)).toBe(false);
      expect((await client.ok("cache.list")).entries.map((e: { cacheKey: string }) => e.cacheKey)).not.toContain(oldKey);
      for (const [ws, cmd] of [
        [kept, "hello-a"],
        [moved, "greeter"],
      ] as const) {
        expect((await client.ok("prepare", { workspace: ws })).ready).toBe(true);
        expect((await client.ok("shell", { command: cmd, cwd: ws, wait: 30_000 })).output.data).toBe(`${cmd} from standin 1\n`);
      }

      // While a prepare runs, the entry it is about to adopt is unused: prune refuses instead.
      const slow = await client.ok("prepare", { workspace: fresh("ws-slow"), packages: ["slow"] });
      await client.ok("jobs.follow", { job: slow.job.id });
      await client.waitFor(
        (f) => f.event === "job.output" && f.job === slow.job.id && String(f.data).includes("slow-build-started"),
        30_000,
        "slow build start",
      );
      expect((await client.call("cache.prune", {})).error).toMatchObject({ code: "conflict" });
      await client.ok("jobs.cancel", { job: slow.job.id });
      await client.waitForExit(slow.job.id, 30_000);
    });
  });

  it("warns at start about a signing key other users can read, naming the file, never its contents", async () => {
    const keys = fresh("keys-open");
    execFileSync("nix-store", ["--generate-binary-cache-key", "hotline-open-1", join(keys, "sec"), join(keys, "pub")]);
    chmodSync(join(keys, "sec"), 0o644);
    const secret = readFileSync(join(keys, "sec"), "utf8").trim();
    await withDaemon(
      { env: { HOTLINE_CACHE_PUSH: `file://${keys}/cache`, HOTLINE_CACHE_SECRET_KEY_FILE: join(keys, "sec") } },
      async (daemon) => {
        const warning = daemon.logLines.find((l) => l.includes("signing key is readable by other users"));
        expect(warning).toContain(join(keys, "sec"));
        expect(daemon.logLines.join("\n")).not.toContain(secret.split(":")[1]);
      },
    );
  });

  it.each([
    [{ HOTLINE_CACHE_PUSH: "not a store url" }, /"not a store url" is not a Nix store URL/],
    [{ HOTLINE_CACHE_TRUSTED_PUBLIC_KEYS: "bad-key" }, /trusted public key "bad-key"/],
    [{ HOTLINE_CACHE_PUSH: "file:///tmp/c", HOTLINE_CACHE_SECRET_KEY_FILE: "relative/key" }, /secretKeyFile must be an absolute path/],
    [{ HOTLINE_CACHE_SECRET_KEY_FILE: "/keys/sec" }, /secretKeyFile is set but push is not/],
  ])("refuses to start with a cache setting Nix would misread: %o", async (env, message) => {
    const daemonDirs = newDirs();
    dirs.push(daemonDirs.root);
    await expect(TestDaemon.start({ env, dirs: daemonDirs })).rejects.toThrow(message);
  });
});

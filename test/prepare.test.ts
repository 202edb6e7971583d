import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, TestDaemon, withDaemon, type Frame, type TestClient } from "./helpers/daemon.js";
import { toolAvailable } from "./helpers/tools.js";
import { bareNixEnv, cleanup, repoFlakeWorkspace, STANDIN, STANDIN_REF, tempDir } from "./nix/helpers.js";

const hasNix = toolAvailable("nix");

/** A `nix` on PATH that records each invocation, so a test can prove no Nix process ran. */
function countingNix(dir: string): { binDir: string; count: () => number } {
  const binDir = join(dir, "bin");
  const log = join(dir, "nix-calls.log");
  mkdirSync(binDir, { recursive: true });
  const real = execFileSync("bash", ["-c", "command -v nix"], { encoding: "utf8" }).trim();
  writeFileSync(join(binDir, "nix"), `#!/bin/bash\necho "$*" >> ${log}\nexec ${real} "$@"\n`);
  chmodSync(join(binDir, "nix"), 0o755);
  return { binDir, count: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0) };
}

describe.skipIf(!hasNix)("prepare through the daemon (real nix, offline stand-in)", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let nixCalls: () => number;
  const dirs: string[] = [];
  const scratch = tempDir("e2e");
  dirs.push(scratch);

  const workspace = () => {
    const d = tempDir("ws");
    dirs.push(d);
    return d;
  };
  const startDaemon = async (dirsOf?: TestDaemon["dirs"]) => {
    const { binDir, count } = countingNix(scratch);
    nixCalls = count;
    daemon = await TestDaemon.start({ dirs: dirsOf, env: { HOTLINE_NIXPKGS: STANDIN_REF, PATH: `${binDir}:${process.env.PATH}` } });
    client = await daemon.client();
  };
  /** Prepares and waits for the job (when there is one); returns the final reply or job status. */
  const prepared = async (params: Record<string, unknown>): Promise<{ reply: Frame; job?: Frame }> => {
    const reply = await client.ok("prepare", params, 60_000);
    if (reply.ready) return { reply };
    const { job } = await client.ok("jobs.wait", { job: reply.job.id, timeoutMs: 60_000 }, 70_000);
    return { reply, job };
  };
  const run = async (cwd: string, command: string, env?: Record<string, string>): Promise<string> => {
    const res = await client.ok("shell", { command, cwd, wait: 30_000, ...(env ? { env } : {}) });
    expect(res.job.state, res.output?.data).toBe("succeeded");
    return String(res.output.data).trim();
  };

  beforeAll(() => startDaemon());
  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    cleanup(...dirs);
  });

  it("prepares packages (incl. nested attr paths); a job in the workspace runs the binaries; a cache hit is ready with no Nix process", async () => {
    const ws = workspace();
    const { reply, job } = await prepared({ workspace: ws, packages: ["hello-a", "pythonPackages.greeter", "tools.nested.deep"] });
    expect(reply.ready).toBe(false);
    expect(job).toMatchObject({ state: "succeeded", kind: "prepare" });
    expect(job!.result.environment.packages).toEqual(["hello-a", "pythonPackages.greeter", "tools.nested.deep"]);
    // The final status shows final progress, not the last phase reported (it was "evaluating").
    expect(job!.progress).toMatchObject({ phase: "done", message: "" });
    expect(job!.progress.done).toBe(job!.progress.total);
    mkdirSync(join(ws, "src"));
    expect(await run(join(ws, "src"), "hello-a; greeter; deep-tool")).toBe(
      "hello-a from standin 1\ngreeter from standin 1\ndeep-tool from standin 1",
    );
    const spec = JSON.parse(readFileSync(join(ws, ".hotline/environment-spec.json"), "utf8"));
    expect(spec).toMatchObject({
      version: 1,
      packages: ["hello-a", "pythonPackages.greeter", "tools.nested.deep"],
      nixpkgs: { url: STANDIN_REF },
      system: job!.result.environment.system,
    });
    expect(spec.nixpkgs.narHash).toMatch(/^sha256-/);

    const before = nixCalls();
    const again = await client.ok("prepare", { workspace: ws, packages: ["tools.nested.deep", "hello-a", "pythonPackages.greeter"] });
    expect(again.ready).toBe(true);
    expect(again.environment.cacheKey).toBe(spec.cacheKey);
    const reuse = await client.ok("prepare", { workspace: ws });
    expect(reuse.ready).toBe(true);
    expect(nixCalls()).toBe(before);
  });

  it("resolves nixpkgs# in a job to the daemon's pin (the stand-in, offline), not Nix's global registry", async () => {
    const dir = workspace();
    const nix = "nix --extra-experimental-features 'nix-command flakes'";
    expect(await run(dir, `${nix} shell nixpkgs#hello-b -c hello-b`)).toBe("hello-b from standin 1");
    const registry = JSON.parse(readFileSync(join(daemon.dirs.state, "nix-registry.json"), "utf8"));
    expect(registry).toEqual({ version: 2, flakes: [{ from: { id: "nixpkgs", type: "indirect" }, to: { type: "path", path: STANDIN } }] });
    // The job's own NIX_CONFIG wins outright, like every variable it sets.
    const own = await client.ok("shell", {
      command: "printenv NIX_CONFIG",
      cwd: dir,
      env: { NIX_CONFIG: "warn-dirty = false" },
      wait: 30_000,
    });
    expect(own.output.data).toBe("warn-dirty = false\n");
  });

  it("takes the job-start options of every job: with wait the reply carries the ended job (with its key), timeoutMs is the job's deadline", async () => {
    const ws = workspace();
    const reply = await client.ok("prepare", { workspace: ws, packages: ["hello-a"], wait: 60_000, key: `wait-${ws}` }, 70_000);
    expect(reply.ready).toBe(false);
    expect(reply.job).toMatchObject({ kind: "prepare", state: "succeeded", key: `wait-${ws}` });
    expect(reply.job.result.environment).toMatchObject({ workspace: ws, packages: ["hello-a"] });
    expect((await client.ok("prepare", { workspace: ws, packages: ["hello-a"], wait: 60_000 })).ready).toBe(true);

    const late = workspace();
    const timedOut = await client.ok("prepare", { workspace: late, packages: ["hello-b"], wait: 60_000, timeoutMs: 1 }, 70_000);
    expect(timedOut.job).toMatchObject({ kind: "prepare", state: "timed_out" });
    expect(existsSync(join(late, ".hotline/environment-spec.json"))).toBe(false);
  });

  it("refuses hostile package names before Nix runs, naming the entry", async () => {
    const ws = workspace();
    const before = nixCalls();
    for (const [bad, index] of [
      ['hello-a"; rm -rf /', 1],
      ["${builtins.abort}", 1],
      ["a..b", 1],
      ["with space", 1],
      [".lead", 1],
      ["trail.", 1],
      ["", 1],
      ["../x", 1],
    ] as const) {
      const reply = await client.call("prepare", { workspace: ws, packages: ["hello-a", bad] });
      expect(reply.ok).toBe(false);
      expect(reply.error).toMatchObject({ code: "invalid_request", path: `/packages/${index}` });
      expect(reply.error.message).toContain(JSON.stringify(bad));
    }
    expect(nixCalls()).toBe(before);
    expect(existsSync(join(ws, ".hotline"))).toBe(false);
    const none = await client.call("prepare", { workspace: ws });
    expect(none.error).toMatchObject({ code: "invalid_request" });
    expect(none.error.message).toMatch(/pass "packages".*or "flake"/);
  });

  describe("refuses a saved spec (a file a cloned repository can carry) with a field the request would refuse", () => {
    const savedSpec = (fields: Record<string, unknown>) => ({
      version: 1,
      nixpkgs: { url: STANDIN_REF },
      system: "x86_64-linux",
      cacheKey: "0".repeat(64),
      templateVersion: 1,
      createdAt: "2026-11-02T10:00:00.000Z",
      updatedAt: "2026-11-02T10:00:00.000Z",
      daemonVersion: "0.1.0",
      ...fields,
    });
    it.each([
      ["/packages/0", (marker: string) => savedSpec({ packages: [`hello-a ]; shellHook = "touch ${marker}"; junk = [ pkgs.hello-a`] })],
      [
        "/nixpkgs/url",
        (marker: string) =>
          savedSpec({ packages: ["hello-a"], nixpkgs: { url: `path:${STANDIN}"; x = builtins.exec [ "touch" "${marker}" ]; y = "` } }),
      ],
      ["/flake", () => savedSpec({ flake: "../../elsewhere" })],
      ["/cacheKey", () => savedSpec({ flake: ".", cacheKey: "../../../../etc" })],
      ["/packages", () => savedSpec({ packages: "hello-a" })],
    ])("field %s: invalid_request naming the file and the field, before any Nix process", async (field, make) => {
      const ws = workspace();
      const marker = join(ws, "hook-ran");
      writeFileSync(join(ws, "flake.nix"), "{ outputs = _: { }; }\n");
      mkdirSync(join(ws, ".hotline"));
      const file = join(ws, ".hotline/environment-spec.json");
      writeFileSync(file, JSON.stringify(make(marker)));
      const before = nixCalls();
      const reply = await client.call("prepare", { workspace: ws });
      expect(reply.error).toMatchObject({ code: "invalid_request", path: "/workspace", details: { file, field } });
      expect(reply.error.message).toContain(`${file} field ${field}`);
      expect(nixCalls()).toBe(before);
      expect(existsSync(marker)).toBe(false);
    });
  });

  it("runs shell hooks once with their exports visible in jobs; the job's own env wins", async () => {
    const ws = workspace();
    const { job } = await prepared({ workspace: ws, packages: ["hooked"] });
    expect(job!.state).toBe("succeeded");
    const log = await client.ok("jobs.output", { job: job!.id });
    expect(log.data).toContain("hooked shell hook ran");
    expect(job!.result.environment.hookRan).toBe(true);
    expect(await run(ws, 'echo "$HOOKED_GREETING|$HOOKED_NAME|$HOOKED_SETUP"')).toBe(
      "greeting from a stdenv function: hooked|hooked|from-setup-hook",
    );
    expect(await run(ws, 'echo "$HOOKED_NAME"', { HOOKED_NAME: "mine" })).toBe("mine");
    // PATH too: the prepared entries are not put in front of a PATH the job sets itself.
    expect(await run(ws, 'echo "$PATH"', { PATH: "/usr/bin:/bin" })).toBe("/usr/bin:/bin");
    expect(await run(ws, "echo $HOME")).not.toBe("/homeless-shelter");
  });

  it.each([
    ["a flake's flake.lock", { flake: "." }, "flake.lock"],
    ["the generated flake.lock of a package list", { packages: ["hello-a"] }, ".hotline/nix/flake.lock"],
  ])(
    "a FIFO as %s fails the preparation at once with invalid_request naming it; the daemon keeps answering",
    async (_what, params, lock) => {
      const ws = workspace();
      writeFileSync(join(ws, "flake.nix"), "{ outputs = _: { }; }\n");
      mkdirSync(join(ws, ".hotline/nix"), { recursive: true });
      const fifo = join(ws, lock);
      // A sync open() of a FIFO with no writer blocks the daemon's only thread until one appears.
      execFileSync("mkfifo", [fifo]);
      const reply = await client.call("prepare", { workspace: ws, ...params }, 5_000);
      const error = reply.error ?? (await client.ok("jobs.wait", { job: reply.result.job.id, timeoutMs: 5_000 }, 5_000)).job.error;
      expect(error).toMatchObject({ code: "invalid_request", details: { file: fifo } });
      expect(error.message).toContain(`${fifo} is a FIFO`);
      await client.ok("state.info", {}, 5_000);
    },
  );

  it("keeps the previous environment when a preparation fails, and says so", async () => {
    const ws = workspace();
    await prepared({ workspace: ws, packages: ["hello-a"] });
    const flake = readFileSync(join(ws, ".hotline/nix/flake.nix"), "utf8");
    const lock = readFileSync(join(ws, ".hotline/nix/flake.lock"), "utf8");
    const { job } = await prepared({ workspace: ws, packages: ["hello-a", "broken"] });
    expect(job!.state).toBe("failed");
    expect(job!.error.message).toContain("previous environment stays in use");
    expect(job!.error).toMatchObject({ path: "/packages/1", details: { fallback: true, package: "broken" } });
    expect(job!.error.message).toContain("broken: this package always fails");
    const log = await client.ok("jobs.output", { job: job!.id });
    expect(log.data).toContain("broken: this package always fails");
    expect(readFileSync(join(ws, ".hotline/nix/flake.nix"), "utf8")).toBe(flake);
    expect(readFileSync(join(ws, ".hotline/nix/flake.lock"), "utf8")).toBe(lock);
    expect(JSON.parse(readFileSync(join(ws, ".hotline/environment-spec.json"), "utf8")).packages).toEqual(["hello-a"]);
    expect(await run(ws, "hello-a")).toBe("hello-a from standin 1");
    const missing = await prepared({ workspace: ws, packages: ["hello-a", "no-such-package"] });
    expect(missing.job!.error).toMatchObject({ code: "invalid_request", path: "/packages/1" });
  });

  it("prepares a repo flake's named shell, refuses a lock change, and accepts updateLock", async () => {
    const ws = repoFlakeWorkspace();
    dirs.push(ws);
    const first = await prepared({ workspace: ws, flake: ".#dev" });
    expect(first.job!.state).toBe("succeeded");
    expect(await run(ws, 'hello-b; echo "$REPO_SHELL $REPO_EXTRA"; echo "$REPO_HOOK"')).toBe(
      `hello-b from standin 1\ndev extra-1\nran in ${ws}`,
    );
    expect((await client.ok("prepare", { workspace: ws, flake: ".#dev" })).ready).toBe(true);
    const text = readFileSync(join(ws, "flake.nix"), "utf8");
    writeFileSync(
      join(ws, "flake.nix"),
      text
        .replace("inputs.nixpkgs.url", `inputs.other.url = "${STANDIN_REF}";\n  inputs.nixpkgs.url`)
        .replace("{ self, nixpkgs }", "{ self, nixpkgs, other }"),
    );
    const lock = readFileSync(join(ws, "flake.lock"), "utf8");
    const refused = await prepared({ workspace: ws });
    expect(refused.job!.error).toMatchObject({ code: "conflict" });
    expect(refused.job!.error.message).toContain("updateLock: true");
    expect(readFileSync(join(ws, "flake.lock"), "utf8")).toBe(lock);
    expect(await run(ws, "hello-b")).toBe("hello-b from standin 1");
    const updated = await prepared({ workspace: ws, flake: ".#dev", updateLock: true });
    expect(updated.job!.state).toBe("succeeded");
    expect(readFileSync(join(ws, "flake.lock"), "utf8")).toContain('"other"');
  });

  it("prepares the generated flake after a person edited it", async () => {
    const ws = workspace();
    await prepared({ workspace: ws, packages: ["hello-a"] });
    const path = join(ws, ".hotline/nix/flake.nix");
    writeFileSync(path, readFileSync(path, "utf8").replace("pkgs.hello-a", "pkgs.hello-a\n            pkgs.hello-b"));
    const { job } = await prepared({ workspace: ws, flake: ".hotline/nix" });
    expect(job!.state, JSON.stringify(job!.error)).toBe("succeeded");
    expect(await run(ws, "hello-a; hello-b")).toBe("hello-a from standin 1\nhello-b from standin 1");
    const spec = JSON.parse(readFileSync(join(ws, ".hotline/environment-spec.json"), "utf8"));
    expect(spec.flake).toBe(".hotline/nix");
    expect((await client.ok("prepare", { workspace: ws })).ready).toBe(true);
  });

  it("serializes two prepares of one workspace and joins an identical one", async () => {
    const ws = workspace();
    const [a, b, c] = await Promise.all([
      client.ok("prepare", { workspace: ws, packages: ["hello-a"] }),
      client.ok("prepare", { workspace: ws, packages: ["hello-a"] }),
      client.ok("prepare", { workspace: ws, packages: ["hello-b"] }),
    ]);
    expect(a.job.id).toBe(b.job.id);
    expect(c.job.id).not.toBe(a.job.id);
    const [ja, jc] = await Promise.all(
      [a.job.id, c.job.id].map(async (id) => (await client.ok("jobs.wait", { job: id, timeoutMs: 60_000 }, 70_000)).job),
    );
    expect(ja.state).toBe("succeeded");
    expect(jc.state).toBe("succeeded");
    const logs = await Promise.all([a.job.id, c.job.id].map(async (id) => (await client.ok("jobs.output", { job: id })).data as string));
    expect(logs.some((l) => l.includes("waiting for another prepare of this workspace"))).toBe(true);
    // Whichever ran last defines the workspace: spec and environment agree.
    const spec = JSON.parse(readFileSync(join(ws, ".hotline/environment-spec.json"), "utf8"));
    const last = Date.parse(ja.endedAt) > Date.parse(jc.endedAt) ? "hello-a" : "hello-b";
    expect(spec.packages).toEqual([last]);
    expect(await run(ws, `${last}`)).toBe(`${last} from standin 1`);
  });

  it("CLI: hotline prepare prepares, and hotline env shows what a job there gets", () => {
    const ws = workspace();
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [CLI_MAIN, ...args], { env: daemon.cliEnv, encoding: "utf8", timeout: 60_000 });
    const prep = cli("prepare", "--workspace", ws, "hello-b", "--json");
    expect(prep.status, prep.stderr).toBe(0);
    expect(JSON.parse(prep.stdout.trim().split("\n").at(-1)!).state).toBe("succeeded");
    const again = cli("prepare", "--workspace", ws, "hello-b", "--json");
    expect(JSON.parse(again.stdout).ready).toBe(true);
    const env = cli("env", ws, "--json");
    expect(env.status, env.stderr).toBe(0);
    const vars = JSON.parse(env.stdout) as Record<string, string>;
    expect(vars.PATH!.split(":")[0]).toMatch(/^\/nix\/store\//);
    expect(vars.IN_NIX_SHELL).toBe("impure");
    expect(Object.keys(vars).some((k) => k.startsWith("HOTLINE_"))).toBe(false);
  });

  it("cancels mid-build without leaving the builder running; the old environment stays", async () => {
    const ws = workspace();
    await prepared({ workspace: ws, packages: ["hello-a"] });
    const reply = await client.ok("prepare", { workspace: ws, packages: ["hello-a", "slow"] });
    await client.ok("jobs.follow", { job: reply.job.id });
    await client.waitFor(
      (f) => f.event === "job.output" && f.job === reply.job.id && String(f.data).includes("slow-build-started"),
      30_000,
      "slow build start",
    );
    await client.ok("jobs.cancel", { job: reply.job.id });
    const exit = await client.waitForExit(reply.job.id, 30_000);
    expect(exit.status.state).toBe("cancelled");
    const ps = execFileSync("ps", ["-eo", "args="], { encoding: "utf8" });
    expect(ps.split("\n").filter((l) => l.startsWith("/bin/sleep 120"))).toEqual([]);
    expect(await run(ws, "hello-a")).toBe("hello-a from standin 1");
    expect(JSON.parse(readFileSync(join(ws, ".hotline/environment-spec.json"), "utf8")).packages).toEqual(["hello-a"]);
  });

  it("survives garbage collection and a daemon restart", async () => {
    const ws = workspace();
    await prepared({ workspace: ws, packages: ["hello-b", "hooked"] });
    execFileSync("nix-collect-garbage", [], { stdio: "ignore" });
    const after = await client.ok("prepare", { workspace: ws, packages: ["hello-b", "hooked"] });
    expect(after.ready).toBe(true);
    expect(await run(ws, "hello-b")).toBe("hello-b from standin 1");

    const catalog = await client.ok("state.catalog");
    expect(catalog.nixpkgs.url).toBe(STANDIN_REF);
    expect(catalog.nixpkgs.narHash).toMatch(/^sha256-/);
    expect(catalog.workspaces.map((w: Frame) => w.workspace)).toContain(ws);

    await client.close();
    await daemon.stop();
    await startDaemon(daemon.dirs);
    const before = nixCalls();
    expect(await run(ws, 'hello-b; echo "$HOOKED_NAME"')).toBe("hello-b from standin 1\nhooked");
    expect((await client.ok("prepare", { workspace: ws })).ready).toBe(true);
    expect(nixCalls()).toBe(before);
  });

  it("passes the Nix features it needs itself: prepares where nix.conf enables neither nix-command nor flakes", async () => {
    const env = bareNixEnv(join(scratch, "bare-nix-conf"));
    // Proof that this Nix really has the features off: the plain CLI refuses.
    const plain = spawnSync("nix", ["eval", "--expr", "1"], { env: { ...process.env, ...env }, encoding: "utf8" });
    expect(plain.stderr).toContain("experimental Nix feature 'nix-command' is disabled");
    await withDaemon({ env: { ...env, HOTLINE_NIXPKGS: STANDIN_REF } }, async (_daemon, c) => {
      expect((await c.ok("state.info")).nix).toMatchObject({ available: true, flakes: true });
      const ws = workspace();
      const reply = await c.ok("prepare", { workspace: ws, packages: ["hello-a"] });
      const { job } = await c.ok("jobs.wait", { job: reply.job.id, timeoutMs: 60_000 }, 70_000);
      expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
      const res = await c.ok("shell", { command: "hello-a", cwd: ws, wait: 30_000 });
      expect(res.output.data).toBe("hello-a from standin 1\n");
    });
  });

  it("answers unavailable, not invalid_request, when Nix itself fails (its store cannot be reached)", async () => {
    await withDaemon(
      { env: { NIX_REMOTE: `unix://${join(scratch, "no-such-nix-daemon.sock")}`, HOTLINE_NIXPKGS: STANDIN_REF } },
      async (_daemon, c) => {
        const reply = await c.ok("prepare", { workspace: workspace(), packages: ["hello-a"] });
        const { job } = await c.ok("jobs.wait", { job: reply.job.id, timeoutMs: 60_000 }, 70_000);
        expect(job.state).toBe("failed");
        expect(job.error).toMatchObject({ code: "unavailable" });
        expect(job.error.message).toContain("cannot connect to socket");
      },
    );
  });

  it("answers unavailable with install advice where Nix is missing, while other actions work", async () => {
    const empty = join(scratch, "empty-path");
    mkdirSync(empty, { recursive: true });
    const bare = await TestDaemon.start({ env: { PATH: empty, HOTLINE_NIXPKGS: STANDIN_REF } });
    try {
      const c = await bare.client();
      const reply = await c.call("prepare", { workspace: STANDIN, packages: ["hello-a"] });
      expect(reply.error).toMatchObject({ code: "unavailable" });
      expect(reply.error.message).toMatch(/install/i);
      expect((await c.ok("state.info")).version).toBeDefined();
      await c.close();
    } finally {
      await bare.stop();
      bare.cleanup();
    }
  });
});

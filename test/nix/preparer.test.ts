import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { composeJobEnvironment } from "../../daemon/environment/job-env.js";
import { NixPreparer } from "../../daemon/nix/preparer.js";
import { readSpec } from "../../daemon/nix/spec.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, recordingContext, repoFlakeWorkspace, standinCopy, STANDIN_REF, SYSTEM, tempDir } from "./helpers.js";

const hasNix = toolAvailable("nix");

function run(cwd: string, env: Record<string, string>, cmd: string): string {
  return execFileSync("bash", ["-c", cmd], { cwd, env, encoding: "utf8" }).trim();
}

describe.skipIf(!hasNix)("NixPreparer with real nix and the stand-in", () => {
  const dirs: string[] = [];
  const state = tempDir("state");
  const cache = tempDir("cache");
  dirs.push(state, cache);
  const settings = { stateDir: state, cacheDir: cache, defaultNixpkgs: STANDIN_REF, system: SYSTEM, daemonVersion: "0.1.0-test" };
  afterAll(() => cleanup(...dirs));

  const ws = () => {
    const d = tempDir("ws");
    dirs.push(d);
    return d;
  };

  it("prepares packages, then answers ready from the cache with no nix process", async () => {
    const prep = new NixPreparer(settings);
    const w = ws();
    const req = { workspace: w, packages: ["hello-a", "tools.greeter"] };
    expect(prep.plan(req, w).ready).toBe(false);
    const rec = recordingContext();
    const { environment: summary } = await prep.run(req, w, rec.ctx);
    expect(summary.packages).toEqual(["hello-a", "tools.greeter"]);
    expect(existsSync(join(w, ".hotline/nix/flake.lock"))).toBe(true);
    const env = composeJobEnvironment({ PATH: process.env.PATH! }, prep.environments.resolve(join(w, "sub/dir")), undefined);
    expect(run(w, env, "hello-a; greeter")).toBe("hello-a from standin 1\ngreeter from standin 1");
    const plan = prep.plan(req, w);
    expect(plan.ready).toBe(true);
    const spec = readSpec(w)!;
    expect(spec.nixpkgs?.narHash).toMatch(/^sha256-/);
    expect(spec.cacheKey).toBe(summary.cacheKey);
  });

  it("keeps a package definition's pin when the default changes", async () => {
    const w = ws();
    const first = new NixPreparer(settings);
    await first.run({ workspace: w, packages: ["hello-b"] }, w, recordingContext().ctx);
    const other = standinCopy("2");
    dirs.push(other);
    const upgraded = new NixPreparer({ ...settings, defaultNixpkgs: `path:${other}` });
    const fresh = ws();
    await upgraded.run({ workspace: fresh, packages: ["hello-b"] }, fresh, recordingContext().ctx);
    await upgraded.run({ workspace: w, packages: ["hello-b", "hello-a"] }, w, recordingContext().ctx);
    const envOld = composeJobEnvironment({ PATH: process.env.PATH! }, upgraded.environments.resolve(w), undefined);
    const envNew = composeJobEnvironment({ PATH: process.env.PATH! }, upgraded.environments.resolve(fresh), undefined);
    expect(run(w, envOld, "hello-b")).toBe("hello-b from standin 1");
    expect(run(fresh, envNew, "hello-b")).toBe("hello-b from standin 2");
    expect(readSpec(w)!.nixpkgs?.url).toBe(STANDIN_REF);
  });

  it("runs shell hooks once and keeps their exports; a failed build keeps the previous environment", async () => {
    const prep = new NixPreparer(settings);
    const w = ws();
    const rec = recordingContext();
    await prep.run({ workspace: w, packages: ["hooked"] }, w, rec.ctx);
    expect(rec.output()).toContain("hooked shell hook ran");
    const env = prep.environments.resolve(w)!;
    expect(env.set.HOOKED_GREETING).toBe("greeting from a stdenv function: hooked");
    expect(env.set.HOOKED_SETUP).toBe("from-setup-hook");
    expect(env.set).not.toHaveProperty("HOME");
    expect(env.set).not.toHaveProperty("NIX_BUILD_TOP");
    const flakeBefore = readFileSync(join(w, ".hotline/nix/flake.nix"), "utf8");
    const err = await prep.run({ workspace: w, packages: ["hooked", "broken"] }, w, recordingContext().ctx).catch((e) => e);
    expect(err.code).toBe("invalid_request");
    expect(err.path).toBe("/packages/1");
    expect(err.message).toMatch(/^packages\[1\] "broken" failed to build: .*broken: this package always fails/s);
    expect(err.details).toMatchObject({
      package: "broken",
      failed: [{ name: "broken", exitCode: 3, log: ["broken: this package always fails"] }],
    });
    expect(err.message).toMatch(/previous environment stays in use/);
    expect(err.details.fallback).toBe(true);
    expect(readFileSync(join(w, ".hotline/nix/flake.nix"), "utf8")).toBe(flakeBefore);
    expect(readSpec(w)!.packages).toEqual(["hooked"]);
    expect(prep.environments.resolve(w)!.set.HOOKED_GREETING).toBeDefined();
  });

  it("prepares a repo flake's named shell, refuses lock changes, accepts updateLock", async () => {
    const prep = new NixPreparer(settings);
    const w = repoFlakeWorkspace();
    dirs.push(w);
    await prep.run({ workspace: w, flake: ".#dev" }, w, recordingContext().ctx);
    const env = prep.environments.resolve(w)!;
    expect(env.set.REPO_SHELL).toBe("dev");
    expect(env.set.REPO_EXTRA).toBe("extra-1");
    expect(env.set.REPO_HOOK).toBe(`ran in ${w}`);
    expect(prep.plan({ workspace: w, flake: ".#dev" }, w).ready).toBe(true);
    // An evaluated file changes: the cache notices without Nix.
    writeFileSync(join(w, "nix/extra.nix"), '{ value = "extra-2"; }\n');
    expect(prep.plan({ workspace: w, flake: ".#dev" }, w).ready).toBe(false);
    // A new input: the lock must change.
    const flake = readFileSync(join(w, "flake.nix"), "utf8");
    writeFileSync(
      join(w, "flake.nix"),
      flake
        .replace("inputs.nixpkgs.url", `inputs.other.url = "${STANDIN_REF}";\n  inputs.nixpkgs.url`)
        .replace("{ self, nixpkgs }", "{ self, nixpkgs, other }"),
    );
    const lockBefore = readFileSync(join(w, "flake.lock"), "utf8");
    const err = await prep.run({ workspace: w, flake: ".#dev" }, w, recordingContext().ctx).catch((e) => e);
    expect(err.code).toBe("conflict");
    expect(err.message).toContain("updateLock: true");
    expect(readFileSync(join(w, "flake.lock"), "utf8")).toBe(lockBefore);
    await prep.run({ workspace: w, flake: ".#dev", updateLock: true }, w, recordingContext().ctx);
    expect(readFileSync(join(w, "flake.lock"), "utf8")).toContain('"other"');
    expect(prep.environments.resolve(w)!.set.REPO_EXTRA).toBe("extra-2");
  });
});

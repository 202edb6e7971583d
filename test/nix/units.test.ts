import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { attrPathProblem, attrPathToNix, validatePackages } from "../../daemon/nix/attr-path.js";
import { environmentFromDevEnv, type DevEnvJson } from "../../daemon/nix/dev-env.js";
import { BuildFailures } from "../../daemon/nix/build-failures.js";
import { nixFailure } from "../../daemon/nix/nix-failure.js";
import { NixProgressTracker } from "../../daemon/nix/progress.js";
import { registryJson, registryTarget, withNixpkgsRegistry, writeNixpkgsRegistry } from "../../daemon/nix/registry.js";
import { toolAvailable } from "../helpers/tools.js";
import { DEFAULT_NIXPKGS } from "../../daemon/config.js";
import { parseNixLogLine } from "../../daemon/runners/nix-cli.js";

/** Logs and dev envs recorded from Nix 2.8 (see the notes on Nix formats). */
const SAMPLES = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/nix-samples");

describe("attribute-path grammar", () => {
  it("accepts Nixpkgs attribute paths", () => {
    for (const ok of ["nodejs", "pnpm", "python3Packages.requests", "nodePackages_latest.typescript", "gtk+3", "_7zz", "hello-a"])
      expect(attrPathProblem(ok)).toBeUndefined();
  });
  it("refuses everything else, naming the entry and its pointer", () => {
    for (const bad of ['a"b', "${x}", "a b", "a..b", ".a", "a.", "", "a/b", "a'b", "a\nb", "1abc", "a;b", "x".repeat(201)])
      expect(attrPathProblem(bad)).toBeDefined();
    try {
      validatePackages(["nodejs", "a..b"]);
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: "invalid_request", path: "/packages/1" });
      expect((err as Error).message).toContain('"a..b"');
    }
  });
  it("quotes keyword and plus segments in the generated Nix", () => {
    expect(attrPathToNix("python3Packages.requests")).toBe("pkgs.python3Packages.requests");
    expect(attrPathToNix("gtk+3")).toBe('pkgs."gtk+3"');
    expect(attrPathToNix("foo.or")).toBe('pkgs.foo."or"');
  });
});

describe("internal-json parsing and progress (Nix 2.8 samples)", () => {
  it("keeps every digit of large activity ids", () => {
    const e = parseNixLogLine('@nix {"action":"start","id":9007199254740993,"level":0,"text":"","type":104,"parent":9007199254740995}');
    expect(e).toMatchObject({ id: "9007199254740993", parent: "9007199254740995" });
    expect(parseNixLogLine("not a record")).toBeNull();
  });
  it("turns a substitution log into byte and path counts", () => {
    const t = new NixProgressTracker();
    let sawBytes = false;
    for (const line of sample(`${SAMPLES}/internal-json-subst.log`).split("\n")) {
      const e = parseNixLogLine(line);
      if (!e) continue;
      t.handle(e);
      if (t.update().unit === "bytes") sawBytes = true;
    }
    const s = t.snapshot();
    expect(sawBytes).toBe(true);
    expect(s.downloadBytes.done).toBeGreaterThan(9_000_000);
    expect(s.substitutions.done).toBe(2);
    expect(s.builds.done).toBe(1);
  });
  it("counts a failed build", () => {
    const t = new NixProgressTracker();
    for (const line of sample(`${SAMPLES}/internal-json-buildfail.log`).split("\n")) {
      const e = parseNixLogLine(line);
      if (e) t.handle(e);
    }
    expect(t.snapshot().builds.failed).toBeGreaterThanOrEqual(1);
  });
  it("names the derivation whose builder failed and its last lines, not the wrapper that depended on it", () => {
    const failures = new BuildFailures();
    for (const line of sample(`${SAMPLES}/internal-json-buildfail.log`).split("\n")) {
      const e = parseNixLogLine(line);
      if (e) failures.feed(e);
    }
    const drv = "/nix/store/l90g5prbzqai91b7zn5pjm842vpjx1i1-brokendep.drv";
    expect(failures.list()).toEqual([{ name: "brokendep", drv, exitCode: 3, log: ["about to fail"] }]);
    const wrapper = "1 dependencies of derivation '/nix/store/dbw75r946drl2fimkbl984s8blzwlgz7-x-env.drv' failed to build";
    const asked = nixFailure(100, wrapper, ["hello", "brokendep"], failures.list());
    expect(asked.toWire()).toMatchObject({
      code: "invalid_request",
      path: "/packages/1",
      details: { nixExitCode: 100, package: "brokendep", failed: [{ name: "brokendep", package: "brokendep", log: ["about to fail"] }] },
    });
    expect(asked.message).toMatch(
      /^packages\[1\] "brokendep" failed to build: .*exited with code 3; its builder's last lines:\nabout to fail\n/,
    );
    const dependency = nixFailure(100, wrapper, ["hello"], failures.list());
    expect(dependency.path).toBeUndefined();
    expect(dependency.message).toMatch(/^"brokendep" failed to build/);
  });
  it("keeps a failed builder's last 25 lines", () => {
    const failures = new BuildFailures();
    failures.feed({
      action: "start",
      id: "1",
      level: 3,
      type: 105,
      text: "",
      fields: ["/nix/store/00000000000000000000000000000000-big-1.0.drv"],
    });
    for (let i = 0; i < 1000; i++) failures.feed({ action: "result", id: "1", type: 101, fields: [`line ${i}`] });
    failures.feed({
      action: "msg",
      level: 0,
      msg: "",
      raw_msg: "builder for '/nix/store/00000000000000000000000000000000-big-1.0.drv' failed with exit code 2",
    });
    const [big] = failures.list();
    expect(big).toMatchObject({ name: "big-1.0", exitCode: 2 });
    expect(big!.log).toEqual(Array.from({ length: 25 }, (_, i) => `line ${975 + i}`));
    expect(nixFailure(100, "x", ["big"], failures.list()).path).toBe("/packages/0");
  });
});

describe("dev env filtering", () => {
  it("keeps exported variables only, drops build-time ones, turns PATH into a fragment", () => {
    const env = environmentFromDevEnv(JSON.parse(sample(`${SAMPLES}/pde.json`)) as DevEnvJson);
    expect(env.set).toMatchObject({ MY_VAR: "hello world", IN_NIX_SHELL: "impure" });
    for (const gone of [
      "HOME",
      "TMPDIR",
      "NIX_BUILD_TOP",
      "NIX_LOG_FD",
      "TERM",
      "out",
      "shellHook",
      "BASH",
      "IFS",
      "OLDPWD",
      "builder",
      "name",
      "system",
    ])
      expect(env.set).not.toHaveProperty(gone);
    expect(env.prepend.PATH).toBeUndefined(); // "/path-not-set" is not a path
  });
  it("drops the placeholder certificate only", () => {
    const json: DevEnvJson = {
      variables: {
        SSL_CERT_FILE: { type: "exported", value: "/no-cert-file.crt" },
        NIX_SSL_CERT_FILE: { type: "exported", value: "/etc/ssl/x.pem" },
        PATH: { type: "exported", value: "/nix/store/a/bin:/nix/store/a/bin:/nix/store/b/bin" },
      },
    };
    const env = environmentFromDevEnv(json);
    expect(env.set).toEqual({ NIX_SSL_CERT_FILE: "/etc/ssl/x.pem" });
    expect(env.prepend.PATH).toEqual(["/nix/store/a/bin", "/nix/store/b/bin"]);
  });
});

function sample(path: string): string {
  return readFileSync(path, "utf8");
}

describe("the nixpkgs flake registry for jobs", () => {
  it("points nixpkgs at a github pin (with its narHash once locked) or a local path", () => {
    const rev = "50ab793786d9de88ee30ec4e4c24fb4236fc2674";
    expect(registryTarget(`github:NixOS/nixpkgs/${rev}`)).toEqual({ type: "github", owner: "NixOS", repo: "nixpkgs", rev });
    expect(registryTarget(`github:NixOS/nixpkgs/${rev}`, { rev, narHash: "sha256-x" })).toMatchObject({ narHash: "sha256-x" });
    expect(registryTarget("github:NixOS/nixpkgs/nixos-24.05", { rev, narHash: "sha256-x" })).toEqual({
      type: "github",
      owner: "NixOS",
      repo: "nixpkgs",
      ref: "nixos-24.05",
    });
    expect(registryTarget("path:/srv/nixpkgs")).toEqual({ type: "path", path: "/srv/nixpkgs" });
    expect(registryTarget("git+https://example.com/nixpkgs?rev=1")).toBeUndefined();
    expect(withNixpkgsRegistry({ NIX_CONFIG: "a = b" }, "/s/r.json").NIX_CONFIG).toBe("a = b\nflake-registry = /s/r.json");
  });
  it.skipIf(!toolAvailable("nix"))("has nix convert any other flake ref, without fetching it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-registry-"));
    try {
      const file = join(dir, "r.json");
      await writeNixpkgsRegistry(file, "git+https://example.invalid/nixpkgs?ref=main");
      expect(JSON.parse(readFileSync(file, "utf8")).flakes).toEqual([
        { from: { id: "nixpkgs", type: "indirect" }, to: { type: "git", url: "https://example.invalid/nixpkgs", ref: "main" } },
      ]);
      await writeNixpkgsRegistry(file, "path:/srv/nixpkgs");
      expect(readFileSync(file, "utf8")).toBe(registryJson({ type: "path", path: "/srv/nixpkgs" }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("is what the image ships as /etc/nix/registry.json for the default pin", () => {
    const shipped = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../../image/etc/nix/registry.json"), "utf8");
    expect(shipped).toBe(registryJson(registryTarget(DEFAULT_NIXPKGS)!));
  });
});

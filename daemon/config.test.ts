import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_NIXPKGS, loadConfig } from "./config.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const PUSH = {
  system: "file:///srv/system-cache",
  user: "file:///srv/user-cache",
  env: "file:///srv/env-cache",
  flag: "file:///srv/flag-cache",
};

/** A config dir and a system config dir (with config.json written when given), and the env that points at them. */
function setup(files: { system?: object; user?: object }) {
  const root = mkdtempSync(join(tmpdir(), "hotline-config-"));
  dirs.push(root);
  const configDir = join(root, "user");
  const systemDir = join(root, "system");
  mkdirSync(configDir);
  mkdirSync(systemDir);
  if (files.user) writeFileSync(join(configDir, "config.json"), JSON.stringify(files.user));
  if (files.system) writeFileSync(join(systemDir, "config.json"), JSON.stringify(files.system));
  return { HOTLINE_CONFIG_DIR: configDir, HOTLINE_SYSTEM_CONFIG_DIR: systemDir, HOME: root };
}

describe("config precedence: flag > env > user file > system file > default", () => {
  const system = { retainJobs: 11, nixpkgs: "github:a/system", environmentCache: { push: PUSH.system, substituters: ["file:///srv/s1"] } };
  const user = { retainJobs: 22, nixpkgs: "github:a/user", environmentCache: { push: PUSH.user } };
  const env = { HOTLINE_RETAIN_JOBS: "33", HOTLINE_NIXPKGS: "github:a/env", HOTLINE_CACHE_PUSH: PUSH.env };
  const flags = { "retain-jobs": "44", nixpkgs: "github:a/flag", "cache-push": PUSH.flag };

  it("default when nothing sets it", () => {
    const c = loadConfig({}, setup({}));
    expect(c.retainJobs).toBe(500);
    expect(c.nixpkgs).toBe(DEFAULT_NIXPKGS);
    expect(c.environmentCache).toEqual({ substituters: [], trustedPublicKeys: [] });
  });

  it("the system file over the default", () => {
    const c = loadConfig({}, setup({ system }));
    expect([c.retainJobs, c.nixpkgs, c.environmentCache.push]).toEqual([11, "github:a/system", PUSH.system]);
    expect(c.environmentCache.substituters).toEqual(["file:///srv/s1"]);
  });

  it("the user file over the system file; the cache section merges key by key", () => {
    const c = loadConfig({}, setup({ system, user }));
    expect([c.retainJobs, c.nixpkgs, c.environmentCache.push]).toEqual([22, "github:a/user", PUSH.user]);
    expect(c.environmentCache.substituters).toEqual(["file:///srv/s1"]); // only the system file names it
  });

  it("the environment over the user file", () => {
    const c = loadConfig({}, { ...setup({ system, user }), ...env });
    expect([c.retainJobs, c.nixpkgs, c.environmentCache.push]).toEqual([33, "github:a/env", PUSH.env]);
    expect(c.environmentCache.substituters).toEqual(["file:///srv/s1"]);
  });

  it("a flag over the environment", () => {
    const c = loadConfig(flags, { ...setup({ system, user }), ...env, HOTLINE_CACHE_SUBSTITUTERS: "file:///srv/e1,file:///srv/e2" });
    expect([c.retainJobs, c.nixpkgs, c.environmentCache.push]).toEqual([44, "github:a/flag", PUSH.flag]);
    expect(c.environmentCache.substituters).toEqual(["file:///srv/e1", "file:///srv/e2"]);
    expect(
      loadConfig({ ...flags, "cache-substituter": ["file:///srv/f1"] }, { ...setup({}), ...env }).environmentCache.substituters,
    ).toEqual(["file:///srv/f1"]);
  });

  it("an empty environment variable counts as unset", () => {
    const c = loadConfig({}, { ...setup({ user }), HOTLINE_RETAIN_JOBS: "", HOTLINE_CACHE_PUSH: "" });
    expect([c.retainJobs, c.environmentCache.push]).toEqual([22, PUSH.user]);
  });

  it("the config and system dirs themselves come from flags or the environment, never from a file", () => {
    const fromEnv = setup({ user });
    const other = setup({ user: { retainJobs: 99 } });
    expect(loadConfig({ "config-dir": other.HOTLINE_CONFIG_DIR }, fromEnv).retainJobs).toBe(99);
    expect(() => loadConfig({}, setup({ user: { configDir: "/elsewhere" } }))).toThrow(/unknown key "configDir"/);
  });

  it("an unknown key in the nested cache section is refused, naming it and the known keys", () => {
    expect(() => loadConfig({}, setup({ system: { environmentCache: { pushTo: PUSH.system } } }))).toThrow(
      /environmentCache: unknown key "pushTo" \(did you mean "push"\?\); known keys: push, secretKeyFile/,
    );
  });
});

describe("every value is checked against its SETTINGS row, naming the key and where it came from", () => {
  const file = (user: object) => {
    const env = setup({ user });
    return { env, path: join(env.HOTLINE_CONFIG_DIR, "config.json") };
  };
  const refused: Array<[string, object, string]> = [
    ["a number given as text", { outputCapBytes: "x" }, 'outputCapBytes: expected a whole number at least 16384, got "x"'],
    [
      "a number given as text (frame limit)",
      { maxPayloadBytes: "abc" },
      'maxPayloadBytes: expected a whole number from 1024 to 1073741824, got "abc"',
    ],
    ["a number below its range", { heartbeatMs: 0 }, "heartbeatMs: expected a whole number from 100 to 3600000, got 0"],
    ["a number above its range", { port: 70000 }, "port: expected a whole number from 0 to 65535, got 70000"],
    ["a fraction where a whole number is meant", { retainJobs: 2.5 }, "retainJobs: expected a whole number at least 0, got 2.5"],
    ["a negative number", { outputBudgetBytes: -1 }, "outputBudgetBytes: expected a whole number at least 0, got -1"],
    ["null", { maxConnections: null }, "maxConnections: expected a whole number from 1 to 100000, got null"],
    ["a string given as a number", { host: 127 }, "host: expected a non-empty string, got 127"],
    [
      "a string outside its choices",
      { logLevel: "verbose" },
      'logLevel: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    ],
    [
      "a list given as one string",
      { allowedOrigins: "https://a.example" },
      'allowedOrigins: expected a list of strings, got "https://a.example"',
    ],
    [
      "a nested list of numbers",
      { environmentCache: { substituters: [1] } },
      "environmentCache.substituters: expected a list of strings, got [1]",
    ],
  ];
  for (const [what, user, message] of refused) {
    it(`refuses ${what}`, () => {
      const { env, path } = file(user);
      expect(() => loadConfig({}, env)).toThrow(`${path}: ${message}`);
    });
  }

  it("refuses an unknown key with the nearest known one", () => {
    const { env, path } = file({ heartbeatMS: 1000 });
    expect(() => loadConfig({}, env)).toThrow(`${path}: unknown key "heartbeatMS" (did you mean "heartbeatMs"?); known keys: host, port,`);
  });

  it("checks flags and environment variables against the same rows", () => {
    const env = setup({});
    expect(() => loadConfig({ "heartbeat-ms": "0" }, env)).toThrow("--heartbeat-ms: expected a whole number from 100 to 3600000, got 0");
    expect(() => loadConfig({}, { ...env, HOTLINE_MAX_PAYLOAD: "abc" })).toThrow("HOTLINE_MAX_PAYLOAD: expected a whole number from 1024");
    expect(() => loadConfig({ "log-level": "loud" }, env)).toThrow("--log-level: expected one of fatal");
    expect(loadConfig({ "idle-exit": "0.5" }, env).idleExitMinutes).toBe(0.5); // a row that allows fractions
  });

  it("accepts values inside every row's range", () => {
    const { env } = file({ port: 0, heartbeatMs: 100, maxPayloadBytes: 1024, outputCapBytes: 16384, logLevel: "warn", allowedOrigins: [] });
    const c = loadConfig({}, env);
    expect([c.port, c.heartbeatMs, c.maxPayloadBytes, c.outputCapBytes, c.logLevel]).toEqual([0, 100, 1024, 16384, "warn"]);
  });
});

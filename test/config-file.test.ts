import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonEnv, newDirs } from "./helpers/daemon.js";
import { runDaemonToExit } from "./helpers/run-to-exit.js";

const dirs = newDirs();
mkdirSync(dirs.config, { recursive: true });
afterAll(() => rmSync(dirs.root, { recursive: true, force: true }));

/** The daemon's start with this config.json: it must exit 1 with one line naming the file, the key and what it wants. */
async function startWith(config: object): Promise<{ code: number | null; stderr: string; file: string }> {
  const file = join(dirs.config, "config.json");
  writeFileSync(file, JSON.stringify(config));
  return { ...(await runDaemonToExit(["--port", "0"], daemonEnv(dirs))), file };
}

describe("a config.json value of the wrong type or range stops the daemon before it starts", { timeout: 60_000 }, () => {
  const cases: Array<[string, object, string]> = [
    [
      "text where a number is meant (it used to spin at 100 % CPU)",
      { outputCapBytes: "x" },
      'outputCapBytes: expected a whole number at least 16384, got "x"',
    ],
    [
      "text where the frame limit is meant (it used to lift the limit)",
      { maxPayloadBytes: "abc" },
      'maxPayloadBytes: expected a whole number from 1024 to 1073741824, got "abc"',
    ],
    [
      "a number out of range (heartbeat 0 dropped every client)",
      { heartbeatMs: 0 },
      "heartbeatMs: expected a whole number from 100 to 3600000, got 0",
    ],
    ["a number where text is meant", { nixpkgs: 5 }, "nixpkgs: expected a non-empty string, got 5"],
    ["a string where a list is meant", { allowedHosts: "a.example" }, 'allowedHosts: expected a list of strings, got "a.example"'],
    [
      "a wrong value in the nested cache section",
      { environmentCache: { push: ["file:///x"] } },
      'environmentCache.push: expected a non-empty string, got ["file:///x"]',
    ],
    ["an unknown key", { outputCap: 1 }, 'unknown key "outputCap" (did you mean "outputCapBytes"?)'],
  ];
  for (const [what, config, message] of cases) {
    it(`refuses ${what}`, async () => {
      const { code, stderr, file } = await startWith(config);
      expect(code).toBe(1);
      expect(stderr.startsWith(`hotline: ${file}: ${message}`), stderr).toBe(true);
      expect(stderr.trim().split("\n")).toHaveLength(1); // no log line: nothing started
    });
  }
});

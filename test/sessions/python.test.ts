import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signalGroup } from "../../daemon/process/index.js";
import { TestDaemon } from "../helpers/daemon.js";

/** The session scenarios through the Python client: its pytest file against a real daemon (as test/python/ runs the others). */
const ROOT = new URL("../../", import.meta.url).pathname;
const PYTHON = process.env.HOTLINE_TEST_PYTHON || "/usr/bin/python3";
/** Debian's Python has python3-websockets and python3-pytest (`python3` on PATH may be another). */
const usable = spawnSync(PYTHON, ["-c", "import websockets, pytest"], { stdio: "ignore", timeout: 30_000 }).status === 0;

describe.skipIf(!usable)("shell sessions through the Python client (pytest)", () => {
  let daemon: TestDaemon;
  const scratch = mkdtempSync(join(tmpdir(), "hotline-py-sessions-"));
  const harness = join(scratch, "harness.json");
  beforeAll(async () => {
    daemon = await TestDaemon.start();
    const work = join(scratch, "work");
    mkdirSync(work);
    writeFileSync(harness, JSON.stringify({ url: daemon.url, tokenFile: join(daemon.dirs.config, "token"), work }));
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("passes clients/python/tests/test_sessions.py", async () => {
    const proc = spawn(
      PYTHON,
      ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", join(ROOT, "clients/python/tests/test_sessions.py")],
      {
        cwd: join(ROOT, "clients/python"),
        env: { ...process.env, HOTLINE_PYTEST_HARNESS: harness },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    let output = "";
    proc.stdout.on("data", (d: Buffer) => (output += d));
    proc.stderr.on("data", (d: Buffer) => (output += d));
    const timer = setTimeout(() => signalGroup(proc.pid, "SIGKILL"), 280_000);
    const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
    clearTimeout(timer);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\b6 passed\b/);
  }, 300_000);
});

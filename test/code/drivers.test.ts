import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The code-context drivers are tested by their languages' own runners (unittest, node --test), each
 * one test here that fails with the runner's output. They test the copies the build ships in
 * dist/daemon/code/drivers (so `npm run build` first), driven through real fd 3/4 pipes.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const SOURCE = join(ROOT, "daemon/code/drivers");
const SHIPPED = join(ROOT, "dist/daemon/code/drivers");
/** Debian's Python: the one with python3-matplotlib, python3-pandas and python3-pil (`python3` on PATH may be another). */
const PYTHON = process.env.HOTLINE_TEST_PYTHON || "/usr/bin/python3";
const REQUIRED = process.env.HOTLINE_REQUIRE_PYTHON === "1";
/** Longest a runner may take; then its process group is killed (nothing outlives the test) and it fails. */
const DEADLINE_MS = 300_000;

function pythonUsable(): boolean {
  const probe = spawnSync(PYTHON, ["-c", "import matplotlib, pandas, PIL"], { encoding: "utf8", timeout: 60_000 });
  if (probe.status === 0) return true;
  const why = probe.error ? `${PYTHON} is not usable (${probe.error.message})` : `${PYTHON} cannot import matplotlib, pandas and PIL`;
  if (REQUIRED) throw new Error(`${why}; HOTLINE_REQUIRE_PYTHON=1 requires them (python3-matplotlib python3-pandas python3-pil)`);
  console.warn(`[skip] ${why}: the Python driver's tests are skipped`);
  return false;
}

/** Runs a test runner in a process group of its own; resolves with its exit code and output. */
function runner(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const proc = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, HOTLINE_DRIVER_DIR: SHIPPED, PYTHONDONTWRITEBYTECODE: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    const timer = setTimeout(() => {
      output += `\n[killed after ${DEADLINE_MS} ms]`;
      process.kill(-proc.pid!, "SIGKILL");
    }, DEADLINE_MS);
    proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
    proc.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("code-context drivers (their own runners, against the shipped copies)", () => {
  it("the build ships the drivers without their tests", () => {
    expect(existsSync(SHIPPED), "dist/daemon/code/drivers is missing: run npm run build").toBe(true);
    const shipped = readdirSync(SHIPPED).filter((name) => name !== "__pycache__"); // the Python driver's own bytecode cache
    expect(shipped.sort()).toEqual(["hotline_matplotlib_backend.py", "hotline_python_driver.py", "js_driver.mjs", "python_driver.py"]);
  });

  it.skipIf(!pythonUsable())(
    "python_driver.py: unittest (state, figures, tables, errors, SIGINT, 20 MB output, files, fds)",
    async () => {
      const { code, output } = await runner(PYTHON, ["-m", "unittest", "discover", "-s", SOURCE, "-p", "test_python_driver.py"], {
        HOTLINE_DRIVER_PYTHON: PYTHON,
      });
      expect(code, output).toBe(0);
      expect(output, output).not.toMatch(/skipped=/); // matplotlib, pandas and PIL were there: nothing may skip
    },
    DEADLINE_MS + 10_000,
  );

  it(
    "js_driver.mjs: node --test (let/await across runs, stacks, SIGINT, console.log, files, fds)",
    async () => {
      const { code, output } = await runner(process.execPath, ["--test", join(SOURCE, "js_driver.test.mjs")], {});
      expect(code, output).toBe(0);
      expect(output).toMatch(/^# fail 0$/m);
    },
    DEADLINE_MS + 10_000,
  );
});

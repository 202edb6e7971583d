import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverDaemon } from "../../client/discovery.js";
import { hotlineDirectories } from "../../client/directories.js";
import { HotlineError } from "../../client/errors.js";
import { TestDaemon } from "../helpers/daemon.js";
import { DIRECTORY_ENVS, DIRECTORY_FLAG_SETS } from "../helpers/directory-envs.js";
import { toolAvailable } from "../helpers/tools.js";
import { STANDIN_REF, cleanup, tempDir } from "../nix/helpers.js";

/**
 * The Python client (clients/python) is tested by its own pytest suite against a real daemon
 * started here; each pytest file is one test below and fails it when pytest fails. pytest learns
 * the daemon's URL, token and directories, and the Node client's answers for the discovery table,
 * from a JSON file named by HOTLINE_PYTEST_HARNESS (for this harness only: the client itself reads
 * tokens from files, never from the environment).
 */
const ROOT = new URL("../../", import.meta.url).pathname;
/** Debian's Python, which has python3-websockets, python3-pytest and mypy (`python3` on PATH may be another); HOTLINE_TEST_PYTHON tries another interpreter. */
const PYTHON = process.env.HOTLINE_TEST_PYTHON || "/usr/bin/python3";
const PACKAGE = join(ROOT, "clients/python");

function pythonUsable(): boolean {
  const probe = spawnSync(PYTHON, ["-c", "import websockets, pytest, mypy"], { stdio: "ignore", timeout: 30_000 });
  const ok = probe.status === 0;
  if (!ok && process.env.HOTLINE_REQUIRE_PYTHON === "1")
    throw new Error(`${PYTHON} with websockets, pytest and mypy is required here (HOTLINE_REQUIRE_PYTHON=1) but is not usable`);
  if (!ok) console.warn(`[skip] ${PYTHON} with websockets, pytest and mypy is not installed: the Python client's tests are skipped`);
  return ok;
}

type Outcome = { url: string; token: string; daemonFile?: string } | { code: string; message: string; details?: unknown };

/** The Node client's discoverDaemon on files laid out for each case (daemon.json and token file states). */
function discoveryCases(root: string): Array<{ name: string; env: Record<string, string>; node: Outcome; sameMessage: boolean }> {
  const gonePid = spawnSync("true").pid!;
  const layouts: Array<{ name: string; daemonJson?: string; token?: string; sameMessage: boolean }> = [
    { name: "no daemon.json", sameMessage: true },
    { name: "daemon.json not JSON", daemonJson: "{not json", token: "t0k\n", sameMessage: false },
    { name: "daemon.json without url", daemonJson: JSON.stringify({ pid: process.pid }), token: "t0k\n", sameMessage: true },
    { name: "stale pid", daemonJson: JSON.stringify({ url: "ws://127.0.0.1:9/", pid: gonePid }), token: "t0k\n", sameMessage: true },
    { name: "no token file", daemonJson: JSON.stringify({ url: "ws://127.0.0.1:9/", pid: process.pid }), sameMessage: false },
    { name: "empty token file", daemonJson: JSON.stringify({ url: "ws://127.0.0.1:9/" }), token: "\n  \n", sameMessage: true },
    { name: "running", daemonJson: JSON.stringify({ url: "ws://127.0.0.1:9/", pid: process.pid }), token: " t0k-123\n", sameMessage: true },
  ];
  return layouts.map((layout, i) => {
    const state = join(root, `case${i}`, "state");
    const config = join(root, `case${i}`, "config");
    mkdirSync(state, { recursive: true });
    mkdirSync(config, { recursive: true });
    if (layout.daemonJson !== undefined) writeFileSync(join(state, "daemon.json"), layout.daemonJson);
    if (layout.token !== undefined) writeFileSync(join(config, "token"), layout.token);
    const env = { HOTLINE_STATE_DIR: state, HOTLINE_CONFIG_DIR: config };
    let node: Outcome;
    try {
      node = discoverDaemon({ env });
    } catch (err) {
      if (!(err instanceof HotlineError)) throw err;
      node = { code: err.code, message: err.message, details: err.details };
    }
    return { name: layout.name, env, node, sameMessage: layout.sameMessage };
  });
}

/** Longest a pytest file may run; then its process group is killed (so nothing outlives the test) and it fails. */
const PYTEST_DEADLINE_MS = 270_000;

/** Runs one pytest file in a process group of its own; resolves with its exit code and output. */
function pytest(file: string, harness: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const proc = spawn(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", join(PACKAGE, "tests", file)], {
      cwd: ROOT,
      env: { ...process.env, HOTLINE_PYTEST_HARNESS: harness, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    const timer = setTimeout(() => {
      output += `\n[killed after ${PYTEST_DEADLINE_MS} ms]`;
      process.kill(-proc.pid!, "SIGKILL");
    }, PYTEST_DEADLINE_MS);
    proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
    proc.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe.skipIf(!pythonUsable())("the Python client hotline_client (pytest against a real daemon)", () => {
  let daemon: TestDaemon;
  const scratch = tempDir("python");
  const harness = join(scratch, "harness.json");

  beforeAll(async () => {
    daemon = await TestDaemon.start({ env: { HOTLINE_NIXPKGS: STANDIN_REF } });
    const directories = DIRECTORY_FLAG_SETS.flatMap((flags) =>
      DIRECTORY_ENVS.map((env) => {
        const options = { stateDir: flags["state-dir"], configDir: flags["config-dir"] };
        return { ...options, env, node: hotlineDirectories({ ...options, env }) };
      }),
    );
    const work = join(scratch, "work");
    mkdirSync(work);
    writeFileSync(
      harness,
      JSON.stringify({
        url: daemon.url,
        tokenFile: join(daemon.dirs.config, "token"),
        stateDir: daemon.dirs.state,
        configDir: daemon.dirs.config,
        workspaceRoot: join(daemon.dirs.root, "workspace"),
        work,
        nix: toolAvailable("nix"),
        directories,
        discovery: discoveryCases(join(scratch, "discovery")),
      }),
    );
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
    cleanup(scratch);
  });

  const files = [
    ["test_jobs.py", "shell output byte-exact, HotlineError from an error reply, follow through a cutting proxy, sync facade"],
    ["test_follow_limits.py", "a follow that meets a frame over the size limit fails at once, without reconnecting"],
    ["test_files.py", "files.write in chunks and files.read through binary frames, byte-exact"],
    ["test_workspace.py", "a task created, a file edited with files.edit, committed and merged"],
    ["test_prepare.py", "prepare of a stand-in package, then a job that uses it"],
    ["test_discovery.py", "connect() agrees with the Node client's discovery on its table"],
    ["test_generated.py", "protocol.py is what the generator makes of schemas/"],
    ["test_typecheck.py", "mypy --strict passes on the package and the example, and reports a wrong param type"],
    ["test_install.py", "pip installs the package into a venv without a package index"],
    ["test_code.py", "code contexts: state across runs, a figure as PNG bytes, an error, a JavaScript context, the sync facade"],
  ] as const;
  it.each(files)(
    "%s: %s",
    async (file) => {
      const { code, output } = await pytest(file, harness);
      expect(code, output).toBe(0);
    },
    300_000,
  );
});

import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { spawn as spawnPty } from "node-pty";
import { SETTINGS } from "../daemon/config.js";
import { CLI_MAIN, newDirs, TestDaemon } from "./helpers/daemon.js";

/** Runs the CLI in a real terminal (so it sees a TTY) and resolves with what it printed and its exit code. */
function cliOnTerminal(args: string[], env: Record<string, string>): Promise<{ text: string; code: number }> {
  return new Promise((resolve) => {
    const term = spawnPty(process.execPath, [CLI_MAIN, ...args], { cols: 200, rows: 50, env });
    let text = "";
    term.onData((d) => (text += d));
    term.onExit(({ exitCode }) => resolve({ text, code: exitCode }));
  });
}

/** A TCP port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("hotline CLI", () => {
  let daemon: TestDaemon;

  const cli = (args: string[], input?: string) =>
    spawnSync(process.execPath, [CLI_MAIN, ...args], { env: daemon.cliEnv, encoding: "utf8", input, timeout: 30_000 });

  beforeAll(async () => {
    daemon = await TestDaemon.start();
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("state info --json finds the daemon through daemon.json and the token file", () => {
    const run = cli(["state", "info", "--json"]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ name: "hotline", pid: daemon.proc.pid });
  });

  it("shell streams stdout and stderr apart and exits with the job's code", () => {
    const run = cli(["shell", "--", "sh", "-c", "echo to-out; echo to-err >&2; exit 4"]);
    expect(run.status).toBe(4);
    expect(run.stdout).toBe("to-out\n");
    expect(run.stderr).toBe("to-err\n");
  });

  it("shell passes piped stdin through to the job", () => {
    const run = cli(["shell", "--", "tr", "a-z", "A-Z"], "piped text");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("PIPED TEXT");
  });

  it("jobs, status, tail and send work on real jobs", () => {
    const run = cli(["shell", "--", "echo", "tail me"]);
    expect(run.status).toBe(0);
    const list = JSON.parse(cli(["jobs", "--json", "--limit", "1"]).stdout);
    const id = list.jobs[0].id as string;
    expect(list.jobs[0].title).toBe("echo 'tail me'"); // an argv job's title is quoted as a shell needs it
    expect(cli(["status", id]).stdout).toContain("succeeded");
    expect(cli(["tail", id]).stdout).toBe("tail me\n");
    expect(cli(["tail", "-f", id]).stdout).toBe("tail me\n");
    const sent = cli(["send", JSON.stringify({ action: "jobs.status", job: id })]);
    expect(JSON.parse(sent.stdout).state).toBe("succeeded");
  });

  it("reports a structured error and a non-zero exit for a bad request", () => {
    const run = cli(["send", JSON.stringify({ action: "jobs.status", job: 42 })]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("invalid_request");
    expect(run.stderr).toContain("/job");
  });

  it("cancel stops a running job", async () => {
    const client = await daemon.client();
    const { job } = await client.ok("shell", { command: "exec sleep 985.25" });
    const run = cli(["cancel", job.id, "--json"]);
    expect(run.status).toBe(0);
    const { job: final } = await client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    expect(final.state).toBe("cancelled");
    await client.close();
  });

  it("token create issues an observe token", () => {
    const run = cli(["token", "create", "--scope", "observe", "--ttl", "15m", "--json"]);
    expect(run.status).toBe(0);
    const created = JSON.parse(run.stdout);
    expect(created.scope).toBe("observe");
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
  });

  it("daemon --help prints every setting of the SETTINGS table and exits 0", () => {
    const run = cli(["daemon", "--help"]);
    expect(run.status).toBe(0);
    for (const setting of SETTINGS) {
      expect(run.stdout).toContain(`--${setting.flag} `);
      expect(run.stdout).toContain(setting.env);
    }
    expect(run.stdout).toContain(daemon.dirs.state); // the value it has now
  });

  it("--url and --token-file reach a daemon that daemon.json does not name", () => {
    const elsewhere = newDirs();
    onTestFinished(() => void spawnSync("rm", ["-rf", elsewhere.root]));
    const env = { ...daemon.cliEnv, HOTLINE_STATE_DIR: elsewhere.state, HOTLINE_CONFIG_DIR: elsewhere.config };
    const run = spawnSync(
      process.execPath,
      [CLI_MAIN, "state", "info", "--json", "--url", daemon.url, "--token-file", join(daemon.dirs.config, "token")],
      { env, encoding: "utf8", timeout: 30_000 },
    );
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout).pid).toBe(daemon.proc.pid);
  });

  it("connection refused says which daemon was expected and that its pid is not running (exit 69)", async () => {
    const stale = newDirs();
    onTestFinished(() => void spawnSync("rm", ["-rf", stale.root]));
    const gone = spawnSync("true");
    const port = await closedPort();
    mkdirSync(stale.state, { recursive: true });
    mkdirSync(stale.config, { recursive: true });
    writeFileSync(join(stale.state, "daemon.json"), JSON.stringify({ pid: gone.pid, url: `ws://127.0.0.1:${port}` }));
    writeFileSync(join(stale.config, "token"), "x");
    const env = { ...daemon.cliEnv, HOTLINE_STATE_DIR: stale.state, HOTLINE_CONFIG_DIR: stale.config };
    const run = spawnSync(process.execPath, [CLI_MAIN, "jobs"], { env, encoding: "utf8", timeout: 30_000 });
    expect(run.status).toBe(69);
    expect(run.stderr).toContain(`hotline: no daemon at ws://127.0.0.1:${port} (daemon.json is from pid ${gone.pid}, which is not running`);
  });

  it("shell --json and tail -f --json print every event as one JSON line", () => {
    const run = cli(["shell", "--json", "--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(run.status).toBe(3);
    const events = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.filter((e) => e.event === "job.output").map((e) => [e.stream, e.data])).toEqual(
      expect.arrayContaining([
        ["stdout", "out\n"],
        ["stderr", "err\n"],
      ]),
    );
    const exit = events.at(-1);
    expect(exit).toMatchObject({ event: "job.exit", status: { state: "failed", exitCode: 3 } });
    const tailed = cli(["tail", "-f", "--json", exit.job]);
    expect(tailed.status).toBe(0);
    const again = tailed.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(again.at(-1)).toMatchObject({ event: "job.exit", job: exit.job });
    expect(again.filter((e) => e.event === "job.output").length).toBeGreaterThan(0);
  });

  it("jobs prints a header, start time and duration, and says no jobs", () => {
    expect(cli(["shell", "--", "echo", "listed"]).status).toBe(0);
    const run = cli(["jobs", "--limit", "1"]);
    const [header, row] = run.stdout.split("\n");
    expect(header).toMatch(/^ID\s+STATE\s+KIND\s+STARTED\s+DURATION\s+EXIT\s+CPU\s+PEAK\s+TITLE$/);
    expect(row).toMatch(
      /^j[0-9a-z]+\s+succeeded\s+shell\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+[\d.]+m?s\s+0\s+[\d.]+s\s+[\d.]+[MG]\s+echo listed$/,
    );
    expect(cli(["jobs", "--state", "queued"]).stdout).toBe("no jobs\n");
  });

  it("errors use the CLI's flag names, not the request's fields", () => {
    const dirs = newDirs();
    onTestFinished(() => void spawnSync("rm", ["-rf", dirs.root]));
    const existing = join(dirs.root, "exists");
    writeFileSync(existing, "keep me");
    const run = cli(["download", "http://127.0.0.1:9/file", "--dest", existing]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("pass --overwrite to replace it (at --dest)");
    expect(run.stdout).not.toContain("overwrite: true");
  });

  it("state info and state catalog print a summary on a terminal, JSON when piped", async () => {
    const info = await cliOnTerminal(["state", "info"], daemon.cliEnv);
    expect(info.code).toBe(0);
    expect(info.text).toMatch(/^hotline \S+ \(commit /);
    expect(info.text).toContain(`pid ${daemon.proc.pid}`);
    expect(info.text).toMatch(/workspaceRoot\s+\S+workspace/);
    const catalog = await cliOnTerminal(["state", "catalog"], daemon.cliEnv);
    expect(catalog.code).toBe(0);
    expect(catalog.text).toMatch(/^system \S+/);
    expect(catalog.text).toContain("nixpkgs ");
    expect(JSON.parse(cli(["state", "info"]).stdout).pid).toBe(daemon.proc.pid);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { CLI_MAIN, TestDaemon } from "./helpers/daemon.js";

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
    const run = cli(["send", JSON.stringify({ action: "jobs.status", job: "nope" })]);
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
});

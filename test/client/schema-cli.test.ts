import { describe, expect, it, onTestFinished } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { CLI_MAIN, newDirs, useDaemon } from "../helpers/daemon.js";

const SCHEMA_DIR = new URL("../../schemas/", import.meta.url).pathname;
const published = (path: string): unknown => JSON.parse(readFileSync(`${SCHEMA_DIR}${path}`, "utf8"));

describe("hotline schema", () => {
  const ctx = useDaemon();
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [CLI_MAIN, ...args], { env: ctx.daemon.cliEnv, encoding: "utf8", timeout: 30_000 });

  it("prints the index, an action's request/params/result, and any schema by name, exactly as published", () => {
    const index = cli(["schema"]);
    expect(index.status).toBe(0);
    expect(JSON.parse(index.stdout)).toEqual(published("index.json"));
    const shell = cli(["schema", "shell"]);
    expect(shell.status).toBe(0);
    expect(JSON.parse(shell.stdout)).toEqual({
      request: published("actions/shell.request.json"),
      params: published("actions/shell.params.json"),
      result: published("actions/shell.result.json"),
    });
    expect(JSON.parse(cli(["schema", "reply"]).stdout)).toEqual(published("reply.json"));
    expect(JSON.parse(cli(["schema", "job.exit"]).stdout)).toEqual(published("events/job.exit.json"));
  });

  it("names the known schemas for an unknown name", () => {
    const run = cli(["schema", "jobs.lst"]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("schema jobs.lst: no action or schema of that name");
    expect(run.stderr).toContain("actions/jobs.list.params");
  });
});

describe("hotline schema without a daemon", () => {
  it("prints the schemas with no daemon running (the CLI connects on its first request), while a verb that needs one exits 69", () => {
    const dirs = newDirs(); // no daemon.json, no token
    onTestFinished(() => rmSync(dirs.root, { recursive: true, force: true }));
    const env = { ...process.env, HOME: dirs.home, HOTLINE_STATE_DIR: dirs.state, HOTLINE_CONFIG_DIR: dirs.config };
    const run = (args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args], { env, encoding: "utf8", timeout: 30_000 });
    const schema = run(["schema", "shell"]);
    expect(schema.stderr).toBe("");
    expect(schema.status).toBe(0);
    expect(JSON.parse(schema.stdout).params).toEqual(published("actions/shell.params.json"));
    const jobs = run(["jobs"]);
    expect(jobs.status).toBe(69);
    expect(jobs.stderr).toContain("no running daemon found");
  });
});

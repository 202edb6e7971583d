import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { CLI_MAIN, useDaemon } from "../helpers/daemon.js";

const SCHEMA_DIR = new URL("../../schemas/", import.meta.url).pathname;
const published = (path: string): unknown => JSON.parse(readFileSync(`${SCHEMA_DIR}${path}`, "utf8"));

describe("hotline schema", () => {
  const ctx = useDaemon();
  const cli = (args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args], { env: ctx.daemon.cliEnv, encoding: "utf8", timeout: 30_000 });

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

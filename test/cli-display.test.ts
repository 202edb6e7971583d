import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { CLI_MAIN, TestDaemon } from "./helpers/daemon.js";

/** A job whose command (so its title) would clear the screen, colour the terminal and draw a fake job line. */
const HOSTILE = "true # \u001b[2J\u001b[31mred\u001b[0m\r\nj_fake000000  running   shell  rm -rf / \u009b\u202e";

describe("the CLI escapes control characters in what it prints of a job", { timeout: 60_000 }, () => {
  let daemon: TestDaemon;
  let jobId = "";
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [CLI_MAIN, ...args], { env: daemon.cliEnv, encoding: "utf8", timeout: 30_000 });

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    const client = await daemon.client();
    const { job } = await client.ok("shell", { command: HOSTILE, wait: 10_000 });
    jobId = job.id;
    await client.close();
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
  });

  /** Nothing a terminal would act on: no ESC, CR, C1 or bidi override, and no line but the ones the CLI drew. */
  const expectInert = (text: string): void => {
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(text).toContain("true # \\x1b[2J\\x1b[31mred\\x1b[0m\\r\\nj_fake000000  running   shell  rm -rf / \\x9b\\u202e");
  };

  it("hotline jobs: one row per job, the title escaped", () => {
    const run = cli(["jobs"]);
    expect(run.status).toBe(0);
    expectInert(run.stdout);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2); // the header and the one job: no fake row
    expect(lines[1]).toMatch(new RegExp(`^${jobId} `));
  });

  it("hotline status: one line, the title escaped", () => {
    const run = cli(["status", jobId]);
    expect(run.status).toBe(0);
    expectInert(run.stdout);
    expect(run.stdout.trimEnd().split("\n")).toHaveLength(1);
  });

  it("--json stays JSON: the title comes back exactly", () => {
    const run = cli(["jobs", "--json"]);
    expect(JSON.parse(run.stdout).jobs[0].title).toContain("\u001b[2J\u001b[31mred\u001b[0m\r\nj_fake000000");
  });

  it("an error that quotes a value is escaped on stderr too", () => {
    const run = cli(["ls", "/nonexistent\u001b[2J\nhotline: fake"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      "hotline: not_found: /nonexistent\\x1b[2J\\nhotline: fake does not exist (or a directory on its way does not) (at --path)\n",
    );
  });
});

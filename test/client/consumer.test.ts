import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useDaemon } from "../helpers/daemon.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

/** A script that uses hotline/client as a program outside this repository would. */
const GOOD = `import { connect, HotlineError, type ResultFor } from "hotline/client";

const client = await connect(); // the local daemon, found through HOTLINE_STATE_DIR / HOTLINE_CONFIG_DIR
const info: ResultFor<"state.info"> = await client.request("state.info");
const { job, status, output } = await client.shell("printf typed", { wait: 30000 });
const exitCode: number | undefined = status.exitCode;
const page = await client.request("jobs.output", { job: job.id, from: 0 });
const next: number = page.next;
const error = await client.request("jobs.status", { job: "j0000000000000" }).catch((err: HotlineError) => err);
console.log(JSON.stringify({ name: info.name, state: status.state, exitCode, output: output?.toString(), next, code: (error as HotlineError).code }));
await client.close();
`;

/** Two mistakes the compiler must catch: a param of the wrong type and an action that does not exist. */
const BAD = `import { connect } from "hotline/client";

const client = await connect();
await client.request("shell", { command: 42 });
await client.request("jobs.lst", {});
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    types: ["node"],
    outDir: "out",
    skipLibCheck: false,
  },
};

describe("the packed package, installed into a project outside the repository", () => {
  const ctx = useDaemon();
  let project: string;
  /** One tsc run over both scripts (it emits despite errors): the good one must have none, the bad one exactly two. */
  let errors: string[];

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), "hotline-consumer-"));
    const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", project], { cwd: ROOT, encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1)!;
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const started = Date.now();
    // The local npm cache first (--prefer-offline); the registry only for what it lacks.
    execFileSync("npm", ["install", `./${tarball}`, "@types/node@20", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: project,
      stdio: ["ignore", "ignore", "inherit"],
      timeout: 240_000,
    });
    const installed = Date.now();
    writeFileSync(join(project, "good.ts"), GOOD);
    writeFileSync(join(project, "bad.ts"), BAD);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ ...TSCONFIG, include: ["good.ts", "bad.ts"] }));
    const compiled = spawnSync(process.execPath, [TSC, "-p", project], { cwd: project, encoding: "utf8", timeout: 180_000 });
    errors = (compiled.stdout + compiled.stderr).split("\n").filter((line) => line.trim() !== "");
    const seconds = (from: number, to: number): string => ((to - from) / 1000).toFixed(1);
    console.log(`consumer test: npm install ${seconds(started, installed)} s, tsc ${seconds(installed, Date.now())} s`);
  }, 420_000);
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("ships dist/ and schemas/ (both ignored by git or generated)", () => {
    const installed = join(project, "node_modules/hotline");
    expect(readdirSync(join(installed, "dist/client"))).toEqual(expect.arrayContaining(["index.js", "index.d.ts"]));
    expect(readdirSync(join(installed, "schemas"))).toContain("index.json");
    expect(readdirSync(join(installed, "dist"))).not.toContain("bench");
  });

  it("compiles a script against hotline/client, and it runs against a real daemon with typed results", () => {
    expect(errors.filter((line) => !line.startsWith("bad.ts"))).toEqual([]);
    const run = spawnSync(process.execPath, [join(project, "out/good.js")], {
      cwd: project,
      env: ctx.daemon.cliEnv,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({
      name: "hotline",
      state: "succeeded",
      exitCode: 0,
      output: "typed",
      next: 5,
      code: "not_found",
    });
  });

  it("refuses to compile a wrong param type and an unknown action", () => {
    const bad = errors.filter((line) => line.startsWith("bad.ts"));
    expect(bad, errors.join("\n")).toHaveLength(2);
    expect(bad[0]).toMatch(/^bad\.ts\(4,\d+\): error TS2322: Type 'number' is not assignable to type 'string \| string\[\]'/);
    expect(bad[1]).toMatch(/^bad\.ts\(5,\d+\): error TS2345: Argument of type '"jobs\.lst"' is not assignable/);
  });
});

import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

describe("process jobs: titles", () => {
  const t = useDaemon();

  it("titles an argv job as a shell would need it typed", async () => {
    const loop = await t.client.ok("shell", { command: ["bash", "-c", "exit 0; while :; do sleep 1 & wait; done"], wait: 10_000 });
    expect(loop.job.title).toBe("bash -c 'exit 0; while :; do sleep 1 & wait; done'");
    const quoted = await t.client.ok("shell", { command: ["printf", "%s|", "it's", "", "plain/path.txt"], wait: 10_000 });
    expect(quoted.job.title).toBe(`printf '%s|' 'it'\\''s' '' plain/path.txt`);
    expect(quoted.output.data).toBe("it's||plain/path.txt|");
  });
});

describe("process jobs: the launcher's environment stays out", () => {
  // As `npm start` (or npx, pnpm, yarn) would launch the daemon.
  const systemPath = "/usr/local/bin:/usr/bin:/bin";
  const t = useDaemon({
    env: {
      npm_lifecycle_event: "start",
      npm_package_name: "hotline",
      npm_config_cache: "/root/.npm",
      INIT_CWD: "/work/project",
      NODE: process.execPath,
      COLOR: "0",
      PATH: `/work/project/node_modules/.bin:/work/node_modules/.bin:/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:${systemPath}`,
      KEEP_ME: "machine setting",
    },
  });

  it("drops npm_*, INIT_CWD, NODE, COLOR and the node_modules/.bin entries of PATH; keeps the rest", async () => {
    const result = await t.client.ok("shell", { command: ["/usr/bin/env"], wait: 10_000 });
    const env = result.output.data as string;
    expect(env).not.toMatch(/^(npm_|INIT_CWD=|NODE=|COLOR=)/im);
    expect(env).toMatch(/^KEEP_ME=machine setting$/m);
    expect(env).toMatch(new RegExp(`^PATH=${systemPath}$`, "m"));
  });
});

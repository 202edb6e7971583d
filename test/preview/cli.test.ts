import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { CLI_MAIN, useDaemon } from "../helpers/daemon.js";
import { freePort, portOf } from "./helpers.js";

describe("hotline ports and hotline preview", () => {
  const t = useDaemon();
  const cli = (...args: string[]): string =>
    execFileSync(process.execPath, [CLI_MAIN, ...args], { env: t.daemon.cliEnv, encoding: "utf8" });

  it("ports lists a job's listener; preview PORT --ttl prints a link for that port with that lifetime", async () => {
    const port = await freePort();
    const { job } = await t.client.ok("shell", { command: ["node", "-e", `require("net").createServer().listen(${port}, "127.0.0.1")`] });
    try {
      await t.client.ok("ports.wait", { port, timeoutMs: 30_000 });
      const listed = JSON.parse(cli("ports", "--json"));
      expect(listed.ports).toContainEqual(expect.objectContaining({ port, job: job.id }));
      expect(cli("ports")).toMatch(new RegExp(`^${port}\\s+127\\.0\\.0\\.1\\s+\\d+\\s+${job.id}\\s+node -e`, "m"));
      const before = Date.now();
      const opened = JSON.parse(cli("preview", String(port), "--ttl", "1h", "--json"));
      expect(opened).toMatchObject({ available: true, port, listening: true });
      expect(opened.url).toMatch(new RegExp(`^http://${port}\\.localhost:${portOf(t.daemon.url)}/\\?hotline_preview_token=hlpv_`));
      expect(Date.parse(opened.expiresAt) - before).toBeGreaterThan(3_500_000);
      const human = cli("preview", String(port));
      expect(human.split("\n")[0]).toMatch(/^http:\/\/\d+\.localhost:\d+\/\?hotline_preview_token=hlpv_/);
    } finally {
      await t.client.ok("jobs.cancel", { job: job.id });
    }
  });
});

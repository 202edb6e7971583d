import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TestDaemon, daemonEnv } from "./helpers/daemon.js";
import { runDaemonToExit } from "./helpers/run-to-exit.js";

describe("one daemon per state directory", { timeout: 40_000 }, () => {
  it("refuses a second daemon before it touches the first one's jobs or daemon.json", async () => {
    const first = await TestDaemon.start();
    try {
      const client = await first.client();
      const { job } = await client.ok("shell", { command: "sleep 300" });
      const daemonFile = join(first.dirs.state, "daemon.json");
      const before = readFileSync(daemonFile, "utf8");

      const second = await runDaemonToExit(["--port", "0"], daemonEnv(first.dirs));
      expect(second.code).toBe(3);
      expect(second.stderr).toContain(`hotline is already running (pid ${first.proc.pid}, ${first.url}`);
      expect(second.stderr.trim().split("\n")).toHaveLength(1); // no log lines: it never started

      expect((await client.ok("jobs.status", { job: job.id })).state).toBe("running");
      expect(readFileSync(daemonFile, "utf8")).toBe(before);
      await client.ok("jobs.cancel", { job: job.id });
      await client.close();
    } finally {
      await first.stop();
      first.cleanup();
    }
  });

  it("takes over a state directory whose daemon was killed (the kernel freed the lock)", async () => {
    const first = await TestDaemon.start();
    await first.kill();
    const second = await TestDaemon.start({ dirs: first.dirs });
    try {
      const client = await second.client();
      expect((await client.ok("state.info")).name).toBe("hotline");
      await client.close();
    } finally {
      await second.stop();
      second.cleanup();
    }
  });
});

import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DAEMON_MAIN, DAEMON_NODE_FLAGS, TestDaemon, daemonEnv } from "./helpers/daemon.js";

/** Runs a daemon to completion (at most 20 s) and returns its exit code and stderr. */
function runToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [...DAEMON_NODE_FLAGS, DAEMON_MAIN, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // A daemon that does not refuse would run forever: kill it after a generous bound, so no test leaves one behind.
    const bound = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    proc.once("exit", (code) => {
      clearTimeout(bound);
      resolve({ code, stderr });
    });
  });
}

describe("one daemon per state directory", { timeout: 40_000 }, () => {
  it("refuses a second daemon before it touches the first one's jobs or daemon.json", async () => {
    const first = await TestDaemon.start();
    try {
      const client = await first.client();
      const { job } = await client.ok("shell", { command: "sleep 300" });
      const daemonFile = join(first.dirs.state, "daemon.json");
      const before = readFileSync(daemonFile, "utf8");

      const second = await runToExit(["--port", "0"], daemonEnv(first.dirs));
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

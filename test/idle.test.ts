import { describe, expect, it } from "vitest";
import { TestDaemon, withDaemon } from "./helpers/daemon.js";

const exited = (daemon: TestDaemon): Promise<number | null> =>
  new Promise((resolve) =>
    daemon.proc.exitCode !== null ? resolve(daemon.proc.exitCode) : daemon.proc.once("exit", (code) => resolve(code)),
  );

describe("idle tracking", () => {
  it("reports lastActivity and idleMs, moved by actions and by job output", async () => {
    await withDaemon({}, async (_daemon, client) => {
      const { job } = await client.ok("shell", { command: "sleep 0.4; echo late" });
      const before = await client.ok("state.info");
      await client.ok("jobs.follow", { job: job.id });
      await client.waitForExit(job.id);
      const after = await client.ok("state.info");
      expect(Date.parse(after.lastActivity)).toBeGreaterThan(Date.parse(before.lastActivity));
      // idleMs counts from that activity (a consistency check, not a time limit: a loaded machine may take any time here).
      expect(after.idleMs).toBeLessThanOrEqual(Date.now() - Date.parse(after.lastActivity) + 1);
    });
  });

  it("--idle-exit stops the daemon cleanly only once nothing runs and nothing happens", async () => {
    const idleMs = 1200; // 0.02 minutes
    const daemon = await TestDaemon.start({ args: ["--idle-exit", "0.02"] });
    try {
      const client = await daemon.client();
      // A job that runs (silently) for longer than the idle limit keeps the daemon up.
      const { job } = await client.ok("shell", { command: "sleep 2.5" });
      const exit = exited(daemon);
      const { job: final } = await client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
      expect(final.state).toBe("succeeded");
      expect(daemon.proc.exitCode).toBeNull();
      await client.close();
      const code = await exit;
      expect(code).toBe(0);
      const stoppedAt = Date.now();
      expect(stoppedAt - Date.parse(final.endedAt)).toBeGreaterThanOrEqual(idleMs - 100);
      expect(daemon.logLines.some((l) => l.includes("idle for"))).toBe(true);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

import { describe, expect, it } from "vitest";
import { withDaemon } from "./helpers/daemon.js";

describe("a followed job that retention evicts", () => {
  it("ends the slow follower with job.exit carrying not_found, and the daemon keeps serving", async () => {
    await withDaemon({ args: ["--retain-jobs", "2"] }, async (daemon, client) => {
      const size = 32 * 1024 * 1024;
      const viewer = await daemon.client();
      const { job } = await client.ok("shell", { command: `head -c ${size} /dev/zero | tr '\\0' x` });
      await viewer.ok("jobs.follow", { job: job.id, binary: true });
      const socket = (viewer.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      const { job: final } = await client.ok("jobs.wait", { job: job.id, timeoutMs: 60_000 });
      expect(final.outputBytes).toBe(size);
      // Three newer finished jobs push the followed one out of the newest two.
      for (let i = 0; i < 3; i++) await client.ok("shell", { command: "true", wait: 10_000 });
      expect((await client.call("jobs.status", { job: job.id })).error.code).toBe("not_found");
      socket.resume();
      const exit = await viewer.waitForExit(job.id, 20_000).catch((err: Error) => {
        throw new Error(`${err.message}\ndaemon exit code ${daemon.proc.exitCode}; log:\n${daemon.logLines.slice(-5).join("\n")}`);
      });
      expect(exit.error.code).toBe("not_found");
      expect(exit.next).toBeLessThan(size);
      expect(viewer.outputOf(job.id).length).toBe(exit.next);
      expect((await client.ok("state.info")).name).toBe("hotline");
      await viewer.close();
    });
  }, 90_000);
});

describe("retention by end time", () => {
  it("keeps a long job that ends after newer short ones, and evicts the short ones that ended first", async () => {
    await withDaemon({ args: ["--retain-jobs", "3"] }, async (_daemon, client) => {
      const { job: long } = await client.ok("shell", { command: "read x; echo long", stdin: true });
      const short: string[] = [];
      for (let i = 0; i < 4; i++) short.push((await client.ok("shell", { command: `echo ${i}`, wait: 10_000 })).job.id);
      await client.ok("jobs.input", { job: long.id, data: "\n", eof: true });
      const { job: ended } = await client.ok("jobs.wait", { job: long.id, timeoutMs: 10_000 });
      expect(ended.state).toBe("succeeded");
      // Kept: the three that ended last — short 2, short 3, then the long one.
      const kept = (await client.ok("jobs.list", { limit: 100 })).jobs.map((j: { id: string }) => j.id).sort();
      expect(kept).toEqual([long.id, short[2], short[3]].sort());
      expect((await client.ok("jobs.output", { job: long.id })).data).toBe("long\n");
    });
  });
});

import { describe, expect, it } from "vitest";
import { statfsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { withDaemon } from "./helpers/daemon.js";

describe("a full disk under a job's output", () => {
  it("fails the job with unavailable naming ENOSPC, keeps its output so far, and keeps serving", async () => {
    // Cap 32 KiB → 4 KiB segments. The second segment is a symlink to /dev/full, so the kernel
    // answers its first write with a real ENOSPC.
    await withDaemon({ args: ["--output-cap", "32768"] }, async (daemon, client) => {
      const { job } = await client.ok("shell", {
        command: "printf 'a%.0s' $(seq 100); read x; head -c 20000 /dev/zero; sleep 30",
        stdin: true,
      });
      const viewer = await daemon.client();
      await viewer.ok("jobs.follow", { job: job.id });
      await viewer.waitFor((f) => f.event === "job.output" && f.job === job.id);
      symlinkSync("/dev/full", join(daemon.dirs.state, "jobs", job.id, `seg-${String(4096).padStart(15, "0")}.log`));
      await client.ok("jobs.input", { job: job.id, data: "\n" });
      const exit = await viewer.waitForExit(job.id);
      expect(exit.status.state).toBe("failed");
      expect(exit.status.error.code).toBe("unavailable");
      expect(exit.status.error.message).toContain("ENOSPC");
      expect(exit.status.outputBytes).toBe(4096);
      expect((await client.ok("jobs.output", { job: job.id, limit: 10 })).data).toBe("aaaaaaaaaa");
      expect((await client.ok("shell", { command: "echo alive", wait: 10_000 })).job.state).toBe("succeeded");
      await viewer.close();
    });
  });
});

describe("the output budget across jobs", () => {
  it("deletes the first-ended jobs once all output passes the budget, and reports it in state.info", async () => {
    await withDaemon({ args: ["--output-budget", "100000"] }, async (_daemon, client) => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await client.ok("shell", { command: "head -c 40000 /dev/zero", wait: 10_000 })).job.id);
      const kept = (await client.ok("jobs.list", { limit: 100 })).jobs.map((j: { id: string }) => j.id);
      expect(kept.sort()).toEqual(ids.slice(2).sort());
      expect((await client.call("jobs.status", { job: ids[0] })).error.code).toBe("not_found");
      const info = await client.ok("state.info");
      // Two jobs' 40000 bytes each, plus one 24-byte run record each.
      expect(info.output).toEqual({ budgetBytes: 100000, usedBytes: 80048 });
    });
  });

  it("evicts a job that alone passed the budget once a later job ends, even one that printed nothing", async () => {
    await withDaemon({ args: ["--output-budget", "100000"] }, async (_daemon, client) => {
      const big = (await client.ok("shell", { command: "head -c 150000 /dev/zero", wait: 10_000 })).job.id;
      expect((await client.ok("jobs.status", { job: big })).id).toBe(big); // the last one ended is always kept
      const quiet = (await client.ok("shell", { command: ["true"], wait: 10_000 })).job.id;
      expect((await client.call("jobs.status", { job: big })).error.code).toBe("not_found");
      expect((await client.ok("jobs.list", { limit: 100 })).jobs.map((j: { id: string }) => j.id)).toEqual([quiet]);
    });
  });

  it("defaults to a quarter of the state volume, at most 16 GiB", async () => {
    await withDaemon({}, async (daemon, client) => {
      const fs = statfsSync(daemon.dirs.state);
      const expected = Math.max(64 * 1024 * 1024, Math.min(16 * 1024 ** 3, Math.floor(fs.blocks * fs.bsize * 0.25)));
      expect((await client.ok("state.info")).output.budgetBytes).toBe(expected);
    });
  });
});

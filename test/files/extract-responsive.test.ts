import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type TestClient, useDaemon } from "../helpers/daemon.js";
import { describeStall, stallsOverBudget } from "../helpers/stalls.js";
import { buildTar, manyEntryZip, zstdRawBlocks } from "./archive-builders.js";
import { scratchDirs } from "./helpers.js";

/**
 * Extraction never holds the daemon's event loop: while the hostile and the merely big archives
 * of issue 10.1 are extracted, another client's state.info and the job's cancel are answered with no
 * turn of the daemon's over the budget, and a zstd frame whose blocks would cost minutes of decoding
 * is refused.
 */

/**
 * What is asserted is the watchdog's figure, not round trips' wall-clock time (on a loaded machine
 * that measures the machine): another client is answered throughout, and no turn the daemon itself
 * spent (on a CPU or blocked, not waiting for one) goes over the suite's budget. Before the fix
 * such turns were 7 s (the zip) and minutes (the zstd frame); `npm run bench` reports the p99
 * against the 100 ms goal.
 */

/** Round-trip times of state.info on `client`, one after another, until `until` settles. */
async function measureWhile(client: TestClient, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  const rtts: number[] = [];
  while (!done) {
    const t0 = performance.now();
    await client.ok("state.info");
    rtts.push(performance.now() - t0);
  }
  return rtts;
}

describe("extraction keeps the daemon responsive", () => {
  const ctx = useDaemon();
  const { root: scratch, fresh } = scratchDirs("hotline-responsive-");

  it("refuses an 80 KB tar.zst of 20,000 one-byte blocks under a 128 MiB window with limit_exceeded, answering state.info meanwhile", async () => {
    const tar = await buildTar([{ header: { name: "pad.bin", size: 18_000 }, data: Buffer.alloc(18_000, 0x61) }]);
    const archive = join(scratch, "nasty.tar.zst");
    writeFileSync(archive, zstdRawBlocks(tar, 1));
    const probe = await ctx.daemon.client();
    const stallsFrom = ctx.daemon.stalls.length;
    try {
      const { job } = await ctx.client.ok("files.extract", { archive, dest: join(fresh(), "out") });
      await ctx.client.ok("jobs.follow", { job: job.id });
      const exit = ctx.client.waitForExit(job.id, 60_000);
      const rtts = await measureWhile(probe, exit);
      const { status } = await exit;
      expect(status.state).toBe("failed");
      expect(status.error).toMatchObject({ code: "limit_exceeded" });
      expect(status.error.message).toMatch(/zstd blocks would cost .* decoding work/);
      expect(rtts.length).toBeGreaterThan(0);
      expect(stallsOverBudget(ctx.daemon, stallsFrom).map(describeStall)).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it("refuses a truncated tar.zst as damaged (invalid_request), the decoder thread's error reaching the job", async () => {
    const tar = await buildTar([{ header: { name: "a.bin", size: 300_000 }, data: Buffer.alloc(300_000, 0x63) }]);
    const whole = zstdRawBlocks(tar, 128 * 1024);
    const archive = join(fresh(), "cut.tar.zst");
    writeFileSync(archive, whole.subarray(0, whole.length - 1000));
    const { job } = await ctx.client.ok("files.extract", { archive, dest: join(scratch, "cut-out"), wait: 30_000 });
    expect(job.state).toBe("failed");
    expect(job.error).toMatchObject({
      code: "invalid_request",
      path: "/archive",
      message: expect.stringContaining("damaged or truncated"),
    });
  });

  for (const [label, make] of [
    // Full 128 KiB raw blocks under a 128 MiB window: the shape `zstd --long=27` writes, so it is
    // decoded (not refused), at ~one window move per block: seconds of work in small steps.
    [
      "a tar.zst with a 128 MiB window",
      async (dir: string) => {
        const tar = await buildTar([{ header: { name: "big.bin", size: 40 * 1024 * 1024 }, data: Buffer.alloc(40 * 1024 * 1024, 0x62) }]);
        writeFileSync(join(dir, "a.tar.zst"), zstdRawBlocks(tar, 128 * 1024));
        return join(dir, "a.tar.zst");
      },
    ],
    [
      "a zip of 65,000 entries",
      async (dir: string) => {
        writeFileSync(join(dir, "a.zip"), manyEntryZip(65_000));
        return join(dir, "a.zip");
      },
    ],
  ] as const) {
    it(`answers state.info and jobs.cancel promptly while extracting ${label}, and the cancel ends the job`, async () => {
      const dir = fresh();
      const archive = await make(dir);
      const probe = await ctx.daemon.client();
      const stallsFrom = ctx.daemon.stalls.length;
      try {
        const { job } = await ctx.client.ok("files.extract", { archive, dest: join(dir, "out") });
        await ctx.client.ok("jobs.follow", { job: job.id });
        const exit = ctx.client.waitForExit(job.id, 120_000);
        await ctx.client.waitFor(
          (f) => f.event === "job.progress" && f.job === job.id && f.progress.done > 0,
          60_000,
          "extraction progress",
        );
        // Let it run a while under measurement, then cancel it mid-way.
        const measuring = measureWhile(probe, exit);
        await ctx.client.waitFor(
          (f) => f.event === "job.progress" && f.job === job.id && f.progress.done > f.progress.total / 4,
          60_000,
          "a quarter done",
        );
        const t0 = performance.now();
        await ctx.client.ok("jobs.cancel", { job: job.id });
        const cancelMs = performance.now() - t0;
        const { status } = await exit;
        const rtts = await measuring;
        expect(status.state).toBe("cancelled");
        expect(rtts.length).toBeGreaterThan(0);
        console.log(
          `[measure] ${label}: jobs.cancel answered in ${cancelMs.toFixed(1)} ms, slowest state.info ${Math.max(...rtts).toFixed(1)} ms`,
        );
        expect(stallsOverBudget(ctx.daemon, stallsFrom).map(describeStall)).toEqual([]);
        expect(readdirSync(dir)).toEqual([archive.slice(dir.length + 1)]);
      } finally {
        await probe.close();
      }
    }, 180_000);
  }
});

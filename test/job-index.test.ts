import { describe, expect, it } from "vitest";
import { readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestDaemon } from "./helpers/daemon.js";

const CAP = 65536;

/** Bytes of the files in a job's directory, by kind. */
function onDisk(dir: string): { segments: number; index: number } {
  const out = { segments: 0, index: 0 };
  for (const name of readdirSync(dir)) {
    const size = statSync(join(dir, name)).size;
    if (name.endsWith(".log")) out.segments += size;
    else out.index += size;
  }
  return out;
}

describe("the run index of a job that switches streams all the time", () => {
  it("counts against the output cap, and reads back right after a restart", async () => {
    let daemon = await TestDaemon.start({ args: ["--output-cap", String(CAP)] });
    try {
      let client = await daemon.client();
      // Each line is its own write, alternating stdout and stderr: thousands of one-line runs.
      const { job } = await client.ok("shell", { command: "for i in $(seq 200000); do echo o; echo e >&2; done", wait: 60_000 });
      expect(job.outputBytes).toBe(800000);
      const dir = join(daemon.dirs.state, "jobs", job.id);
      const disk = onDisk(dir);
      console.log(`run index ${disk.index} B, segments ${disk.segments} B, cap ${CAP}`);
      expect(disk.segments + disk.index).toBeLessThanOrEqual(CAP + 1024);
      await client.close();
      await daemon.stop();

      daemon = await TestDaemon.start({ args: ["--output-cap", String(CAP)], dirs: daemon.dirs });
      client = await daemon.client();
      const status = await client.ok("jobs.status", { job: job.id });
      expect(status.outputBytes).toBe(800000);
      // Every kept byte keeps its stream: stdout reads only "o" lines, stderr only "e" lines.
      // (A line may be cut where the omitted middle begins or ends.)
      for (const [stream, only] of [
        ["stdout", /^[o\n]+$/],
        ["stderr", /^[e\n]+$/],
      ] as const) {
        let from = 0;
        let text = "";
        for (;;) {
          const part = await client.ok("jobs.output", { job: job.id, from, stream });
          text += part.data;
          if (part.eof) break;
          from = part.next;
        }
        expect(text.length).toBeGreaterThan(1000);
        expect(text).toMatch(only);
      }
      expect((await client.ok("jobs.output", { job: job.id, tail: 4, stream: "stderr" })).data).toBe("e\ne\n");
      await client.close();
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 120_000);

  it("a runaway index on disk (3 GiB, sparse) neither stops the daemon from starting nor is read whole", async () => {
    let daemon = await TestDaemon.start();
    try {
      let client = await daemon.client();
      const { job } = await client.ok("shell", { command: "echo out; echo err >&2", wait: 10_000 });
      const other = (await client.ok("shell", { command: "echo fine", wait: 10_000 })).job;
      await client.close();
      await daemon.stop();
      const huge = 3 * 1024 ** 3;
      // One job's segment index, another's old whole-log index (the format before per-segment ones).
      const dir = join(daemon.dirs.state, "jobs", job.id);
      truncateSync(join(dir, `seg-${"0".padStart(15, "0")}.idx`), huge);
      const otherDir = join(daemon.dirs.state, "jobs", other.id);
      rmSync(join(otherDir, `seg-${"0".padStart(15, "0")}.idx`));
      writeFileSync(join(otherDir, "runs.idx"), "");
      truncateSync(join(otherDir, "runs.idx"), huge);

      daemon = await TestDaemon.start({ dirs: daemon.dirs });
      client = await daemon.client();
      // The first records (of the real index, then zeros that are no records) still say which stream is which.
      expect((await client.ok("jobs.output", { job: job.id, stream: "stderr" })).data).toBe("err\n");
      expect((await client.ok("jobs.output", { job: other.id })).data).toBe("fine\n");
      expect((await client.ok("state.info")).output.usedBytes).toBeLessThan(1024 * 1024);
      await client.close();
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 120_000);
});

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { buildTar } from "./archive-builders.js";

/**
 * Issue 10.10: a FIFO (or a device) given to files.run or files.extract is refused before it is
 * opened. Opening a FIFO blocks until a writer appears; the daemon used to do that on a libuv pool
 * thread (four of them hang every file action) or, for zips, on the event loop itself.
 */
describe("files.run and files.extract refuse FIFOs and devices", () => {
  const ctx = useDaemon();
  const scratch = mkdtempSync(join(tmpdir(), "hotline-special-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const fifo = join(scratch, "pipe");
  execFileSync("mkfifo", [fifo]);

  it("refuses a FIFO as the archive (five at once, more than the thread pool) and a device, then still extracts a real archive", async () => {
    const jobs = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        ctx.client.ok("files.extract", { archive: fifo, format: "zip", dest: join(scratch, `fifo-out${i}`), wait: 30_000 }),
      ),
    );
    for (const { job } of jobs) {
      expect(job.state).toBe("failed");
      expect(job.error).toMatchObject({ code: "invalid_request", path: "/archive" });
      expect(job.error.message).toContain(`${fifo} is a FIFO; only regular files are accepted`);
    }
    const device = await ctx.client.ok("files.extract", {
      archive: "/dev/zero",
      format: "tar",
      dest: join(scratch, "zero-out"),
      wait: 30_000,
    });
    expect(device.job.error).toMatchObject({
      code: "invalid_request",
      path: "/archive",
      message: expect.stringContaining("/dev/zero is a device"),
    });
    writeFileSync(join(scratch, "ok.tar"), await buildTar([{ header: { name: "a.txt" }, data: Buffer.from("a") }]));
    const ok = await ctx.client.ok("files.extract", { archive: join(scratch, "ok.tar"), dest: join(scratch, "ok-out"), wait: 30_000 });
    expect(ok.job.state).toBe("succeeded");
  });

  it("refuses a FIFO and a device as the script of files.run in the reply", async () => {
    for (const [path, kind] of [
      [fifo, "a FIFO"],
      ["/dev/zero", "a device"],
    ] as const) {
      for (let i = 0; i < 5; i++) {
        const reply = await ctx.client.call("files.run", { path, interpreter: "bash" });
        expect(reply.ok).toBe(false);
        expect(reply.error).toMatchObject({
          code: "invalid_request",
          path: "/path",
          message: `${path} is ${kind}; only regular files are accepted`,
        });
      }
    }
    writeFileSync(join(scratch, "ok.sh"), "echo fine\n");
    const { job } = await ctx.client.ok("files.run", { path: join(scratch, "ok.sh"), wait: 30_000 });
    expect(job.state).toBe("succeeded");
  });
});

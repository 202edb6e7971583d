import { execFileSync } from "node:child_process";
import { closeSync, openSync, ftruncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { describeStall, stallsOverBudget } from "../helpers/stalls.js";
import { infoLatencies, scratch } from "./helpers.js";

const GIB4 = 4 * 1024 ** 3;

describe("files.* never block the daemon", () => {
  const ctx = useDaemon();

  it("handles a FIFO, a device and a 4 GiB sparse file while another client is answered and no turn goes over the budget", async () => {
    const dir = scratch();
    const fifo = join(dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    const sparse = join(dir, "sparse.bin");
    const fd = openSync(sparse, "w");
    ftruncateSync(fd, GIB4);
    closeSync(fd);
    writeFileSync(join(dir, "small.txt"), "still works");
    const observer = await ctx.daemon.client();
    const stallsBefore = ctx.daemon.stalls.length;

    const work = (async () => {
      // More FIFO reads than libuv has pool threads: a blocking open would hang every later file action.
      const fifoReplies = await Promise.all(Array.from({ length: 8 }, () => ctx.client.call("files.read", { path: fifo })));
      for (const r of fifoReplies) expect(r.error).toMatchObject({ code: "invalid_request", path: "/path" });
      expect(fifoReplies[0]!.error.message).toContain("FIFO");
      expect((await ctx.client.call("files.edit", { path: fifo, edits: [{ old: "a", new: "b" }] })).error).toMatchObject({
        code: "invalid_request",
      });
      expect((await ctx.client.call("files.write", { path: fifo, data: "x", ifMatch: "0".repeat(64) })).error).toMatchObject({
        code: "invalid_request",
      });
      for (const device of ["/dev/zero", "/dev/urandom"]) {
        const r = await ctx.client.call("files.read", { path: device });
        expect(r.error, device).toMatchObject({ code: "invalid_request" });
        expect(r.error.message).toContain("device");
      }
      expect((await ctx.client.ok("files.stat", { path: fifo })).type).toBe("fifo");
      expect((await ctx.client.ok("files.stat", { path: "/dev/zero" })).type).toBe("device");
      // The sparse file: the largest slice at the start, then one just before the end; only what is asked is read.
      const head = await ctx.client.ok("files.read", { path: sparse, limit: 4 * 1024 * 1024, encoding: "base64" });
      expect(head).toMatchObject({ size: GIB4, offset: 0, next: 4 * 1024 * 1024, eof: false });
      const tail = await ctx.client.ok("files.read", { path: sparse, offset: GIB4 - 16, limit: 8 });
      expect(tail).toMatchObject({ data: "\u0000".repeat(8), next: GIB4 - 8, eof: false });
      expect((await ctx.client.call("files.edit", { path: sparse, edits: [{ old: "a", new: "b" }] })).error).toMatchObject({
        code: "limit_exceeded",
      });
      expect((await ctx.client.ok("files.read", { path: join(dir, "small.txt") })).data).toBe("still works");
    })();

    const answered = await infoLatencies(observer, work);
    await work;
    await observer.close();
    // Another client was answered all along (a FIFO open blocking libuv's pool, or a synchronous read
    // of 4 GiB, would hang or stall it), and the watchdog's own figure: no turn the daemon spent (on a
    // CPU or blocked, not waiting for one) went over the suite's budget. A round trip's wall-clock
    // time is not asserted: on a loaded machine it measures the machine.
    expect(answered.length).toBeGreaterThan(0);
    expect(stallsOverBudget(ctx.daemon, stallsBefore).map(describeStall)).toEqual([]);
  }, 300_000);
});

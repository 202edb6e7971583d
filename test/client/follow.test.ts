import { describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, HotlineError } from "../../client/index.js";
import { CuttingProxy } from "../helpers/cutting-proxy.js";
import { useDaemon, withDaemon } from "../helpers/daemon.js";

const MIB = 1024 * 1024;

describe("job.follow()", () => {
  const ctx = useDaemon();

  it("delivers every byte of a 20 MB job exactly once, in order, across three server-side disconnects", async () => {
    const content = randomBytes(20 * MIB);
    const file = join(ctx.daemon.dirs.root, "content.bin");
    writeFileSync(file, content);
    const proxy = await CuttingProxy.start(ctx.daemon.url);
    const client = await connect({ url: proxy.url, token: ctx.daemon.token });
    try {
      // Written a MiB at a time over a while, so the cuts hit both live output and catch-up from disk.
      const { job } = await client.shell(`for i in $(seq 0 19); do dd if=${file} bs=1048576 skip=$i count=1 status=none; sleep 0.02; done`);
      const cutsAt = [3 * MIB, 9 * MIB, 15 * MIB];
      const hash = createHash("sha256");
      let received = 0;
      let cuts = 0;
      let exit: unknown;
      for await (const event of job.follow()) {
        if (event.event === "job.output") {
          expect(event.offset).toBe(received); // nothing repeated, nothing skipped
          hash.update(event.bytes);
          received += event.bytes.length;
          if (cuts < cutsAt.length && received >= cutsAt[cuts]!) {
            cuts++;
            proxy.cut();
          }
        } else if (event.event === "job.exit") exit = event;
      }
      expect(cuts).toBe(3);
      expect(proxy.accepted).toBeGreaterThanOrEqual(4); // the first connection and a new one after each cut
      expect(exit).toEqual(expect.objectContaining({ event: "job.exit", next: 20 * MIB }));
      expect(received).toBe(20 * MIB);
      const expected = createHash("sha256").update(content).digest("hex");
      expect(hash.digest("hex")).toBe(expected);
      expect(
        createHash("sha256")
          .update(await job.output())
          .digest("hex"),
      ).toBe(expected);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("rejects a request in flight when its socket drops with unavailable, and the next request reconnects", async () => {
    const proxy = await CuttingProxy.start(ctx.daemon.url);
    const client = await connect({ url: proxy.url, token: ctx.daemon.token });
    try {
      const { job } = await client.shell("sleep 30");
      const waiting = job.wait().catch((err: unknown) => err);
      await client.request("jobs.status", { job: job.id }); // jobs.wait is in flight on the daemon now
      proxy.cut();
      const error = (await waiting) as HotlineError;
      expect(error).toBeInstanceOf(HotlineError);
      expect(error.code).toBe("unavailable");
      expect(error.message).toContain("before the reply to jobs.wait");
      expect((await job.cancel({ signal: "SIGKILL" })).id).toBe(job.id);
      expect(proxy.accepted).toBe(2);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("stops on break and leaves the job running", async () => {
    const client = await connect({ url: ctx.daemon.url, token: ctx.daemon.token });
    try {
      const { job } = await client.shell("echo started; sleep 30");
      for await (const event of job.follow()) {
        if (event.event === "job.output") break;
      }
      expect((await job.status()).state).toBe("running");
      await job.cancel({ signal: "SIGKILL" });
    } finally {
      await client.close();
    }
  });

  it("rejects with the daemon's error for an unknown job", async () => {
    const client = await connect({ url: ctx.daemon.url, token: ctx.daemon.token });
    try {
      const error = await client
        .job("j0000000000000")
        .follow()
        .next()
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(HotlineError);
      expect((error as HotlineError).code).toBe("not_found");
    } finally {
      await client.close();
    }
  });
});

describe("job.follow() when the daemon is gone", () => {
  it("gives up after the reconnect attempts with unavailable, naming the offset to resume from", async () => {
    await withDaemon({}, async (daemon) => {
      const client = await connect({ url: daemon.url, token: daemon.token, reconnect: { attempts: 3, delayMs: 10 } });
      try {
        const { job } = await client.shell("printf abc; sleep 30");
        const follow = job.follow();
        const first = await follow.next();
        expect(first.value).toEqual(expect.objectContaining({ event: "job.output", offset: 0 }));
        await daemon.stop();
        const error = await (async () => {
          for (;;) await follow.next();
        })().catch((err: unknown) => err);
        expect(error).toBeInstanceOf(HotlineError);
        expect((error as HotlineError).code).toBe("unavailable");
        expect((error as HotlineError).details).toEqual({ job: job.id, from: 3 });
      } finally {
        await client.close();
      }
    });
  });
});

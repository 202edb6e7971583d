import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { TestClient, TestDaemon } from "./helpers/daemon.js";

/** A /proc/<pid>/status field in MiB (VmRSS: resident now, VmHWM: the peak so far). */
function memoryMiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]) / 1024;
}

const REQUESTS = 300;

describe("a client that stops reading", () => {
  it("cannot grow the daemon's memory by pipelining requests it never reads (300 × jobs.output of 1 MiB)", async () => {
    const daemon = await TestDaemon.start({ args: ["--log-level", "debug"] });
    try {
      const client = await daemon.client();
      const { job } = await client.ok("shell", { command: "yes hotline | head -c 67108864", wait: 60_000 });
      await client.ok("jobs.output", { job: job.id }); // warm the path once
      const pid = daemon.proc.pid!;
      const idle = memoryMiB(pid, "VmRSS");

      const overBudget = new Promise<void>((resolve) =>
        daemon.proc.stderr!.on("data", (chunk: Buffer) => chunk.toString().includes("client over budget") && resolve()),
      );
      const hog = await TestClient.connect(daemon.url, daemon.token);
      const socket = (hog.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      for (let i = 0; i < REQUESTS; i++)
        hog.sendRaw(JSON.stringify({ id: i, action: "jobs.output", job: job.id, from: (i % 64) * 1024 * 1024 }));
      // The daemon says when it stopped starting this client's requests: its memory is at the plateau.
      await overBudget;
      const held = memoryMiB(pid, "VmRSS");

      expect(held - idle, `RSS ${idle.toFixed(0)} → ${held.toFixed(0)} MiB while the client does not read`).toBeLessThan(100);
      // The other clients are still served meanwhile.
      expect((await client.ok("state.info")).name).toBe("hotline");

      // Once it reads, every request is answered, and the peak stayed bounded.
      socket.resume();
      await hog.waitFor((f) => f.id === REQUESTS - 1, 60_000, "the last reply");
      expect(hog.frames.filter((f) => f.ok === true)).toHaveLength(REQUESTS);
      expect(memoryMiB(pid, "VmHWM") - idle).toBeLessThan(150);
      await Promise.all([hog.close(), client.close()]);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 120_000);
});

describe("a client that never finishes a message", () => {
  it("is closed with 1009 once its unfinished fragmented message passes twice maxPayloadBytes", async () => {
    const daemon = await TestDaemon.start();
    try {
      const client = await daemon.client();
      const closed = new Promise<number>((resolve) => client.ws.once("close", (code) => resolve(code)));
      const fragment = Buffer.alloc(512 * 1024, 0x20);
      // 3 MiB in fragments, never the final one: the daemon would have to hold all of it.
      for (let i = 0; i < 6; i++) client.ws.send(fragment, { fin: false, binary: false });
      expect(await closed).toBe(1009);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

describe("connection cap", () => {
  it("refuses one connection more than --max-connections with HTTP 503 limit_exceeded, and accepts again after one closes", async () => {
    const daemon = await TestDaemon.start({ args: ["--max-connections", "3"] });
    try {
      const clients = [await daemon.client(), await daemon.client(), await daemon.client()];
      const err = (await TestClient.connect(daemon.url, daemon.token).catch((e: unknown) => e)) as { status: number; body: string };
      expect(err.status).toBe(503);
      const body = JSON.parse(err.body);
      expect(body.error.code).toBe("limit_exceeded");
      expect(body.error.message).toContain("--max-connections");
      await clients.pop()!.close();
      // The close has been handled once another connection's round trip completes after it.
      await clients[0]!.ok("state.info");
      const again = await daemon.client();
      expect((await again.ok("state.info")).name).toBe("hotline");
      await Promise.all([again.close(), ...clients.map((c) => c.close())]);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

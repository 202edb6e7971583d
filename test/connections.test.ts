import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import WebSocket from "ws";
import { TestDaemon } from "./helpers/daemon.js";

describe("heartbeat", () => {
  it("disconnects a client that stops answering pings, and keeps one that answers", async () => {
    const daemon = await TestDaemon.start({ args: ["--heartbeat-ms", "100"] });
    try {
      // A client that never answers pings is below the client library (which always answers them):
      // this one speaks raw WebSocket with autoPong off.
      const silent = await new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(daemon.url, { headers: { authorization: `Bearer ${daemon.token}` }, autoPong: false });
        ws.once("open", () => resolve(ws));
        ws.once("error", reject);
      });
      const alive = await daemon.client();
      let pings = 0;
      alive.ws.on("ping", () => pings++);
      const closed = await new Promise<number>((resolve) => silent.once("close", (code) => resolve(code)));
      expect(closed).toBe(1006); // terminated, no closing handshake
      expect(pings).toBeGreaterThanOrEqual(1);
      expect(alive.ws.readyState).toBe(WebSocket.OPEN);
      // The live client still gets answers after several heartbeats.
      expect((await alive.call("state.info")).ok).toBe(true);
      await alive.close();
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

describe("shutdown", () => {
  it("does not wait for a client that never completes the closing handshake", async () => {
    const daemon = await TestDaemon.start();
    // Raw WebSocket on purpose: the test needs a socket that stops reading mid-protocol and never
    // completes the closing handshake, which no client of the library would do.
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(daemon.url, { headers: { authorization: `Bearer ${daemon.token}` } });
      socket.once("open", () => resolve(socket));
      socket.once("error", reject);
    });
    // Stop reading: the daemon's close frame is never answered.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const started = Date.now();
    expect(await daemon.stop()).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000); // ws's own close timeout would be 30 s
    daemon.cleanup();
  });
});

describe("reconnect cycles", () => {
  it("100 connect-follow-disconnect cycles leak no file descriptors (budget: 16)", async () => {
    const daemon = await TestDaemon.start();
    try {
      const fds = (): number => readdirSync(`/proc/${daemon.proc.pid}/fd`).length;
      const client = await daemon.client();
      const { job } = await client.ok("shell", { command: "seq 1 20000", wait: 10_000 });
      const cycle = async (): Promise<void> => {
        const viewer = await daemon.client();
        await viewer.ok("jobs.follow", { job: job.id });
        await viewer.waitForExit(job.id);
        await viewer.close();
      };
      await cycle();
      const before = fds();
      for (let i = 0; i < 100; i++) await cycle();
      await client.ok("state.info"); // the daemon has handled every close by now
      expect(fds() - before).toBeLessThanOrEqual(16);
      await client.close();
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

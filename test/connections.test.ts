import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import WebSocket from "ws";
import { TestClient, TestDaemon } from "./helpers/daemon.js";

describe("heartbeat", () => {
  it("disconnects a client that stops answering pings, and keeps one that answers", async () => {
    const daemon = await TestDaemon.start({ args: ["--heartbeat-ms", "300"] });
    try {
      // 300 ms, not the 100 ms floor: the live client (this test process, on a busy machine) must
      // answer each ping before the next tick.
      // A client that never answers pings is below the client library (which always answers them):
      // this one speaks raw WebSocket with autoPong off.
      const silent = await new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(daemon.url, { headers: { authorization: `Bearer ${daemon.token}` }, autoPong: false });
        ws.once("open", () => resolve(ws));
        ws.once("error", reject);
      });
      const silentClosed = new Promise<number>((resolve) => silent.once("close", (code) => resolve(code)));
      const alive = await daemon.client();
      // On a busy machine the live client may connect just before the tick that ends the silent one,
      // so its pings are counted after that close, not by it: two pings show it outlived a full
      // missed-pong window (a client that did not answer would have been cut at the second).
      const twoPings = new Promise<void>((resolve) => {
        let pings = 0;
        alive.ws.on("ping", () => {
          if (++pings === 2) resolve();
        });
      });
      expect(await silentClosed).toBe(1006); // terminated, no closing handshake
      await twoPings;
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

/**
 * Resolves once the daemon's log (stderr) has contained `text`, counting from now; rejects after
 * 30 s, within the test's timeout, so a failing test still stops its daemon.
 */
function logged(daemon: TestDaemon, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => {
      daemon.proc.stderr!.off("data", onData);
      reject(new Error(`the daemon did not log "${text}" within 30 s`));
    }, 30_000);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (!seen.includes(text)) return;
      daemon.proc.stderr!.off("data", onData);
      clearTimeout(timer);
      resolve();
    };
    daemon.proc.stderr!.on("data", onData);
  });
}

describe("heartbeat of a client whose requests are held", () => {
  it("cuts off one that pipelined and stopped reading (its slot is free again), and keeps one held only by running requests", async () => {
    const daemon = await TestDaemon.start({ args: ["--heartbeat-ms", "400", "--max-connections", "3", "--log-level", "debug"] });
    try {
      const client = await daemon.client();
      const { job: big } = await client.ok("shell", { command: "yes hotline | head -c 16777216", wait: 60_000 });
      const { job: sleeper } = await client.ok("shell", { command: "sleep 120" });

      // Held only by its own running requests: 300 jobs.wait, more than run at once, nothing queued to it.
      const waiter = await daemon.client();
      let waiterClosed = false;
      waiter.ws.on("close", () => (waiterClosed = true));
      const waiterHeld = logged(daemon, "client over budget");
      for (let i = 0; i < 300; i++) waiter.sendRaw(JSON.stringify({ id: i, action: "jobs.wait", job: sleeper.id, timeoutMs: 600_000 }));
      await waiterHeld;

      // Pipelines replies of 1 MiB and never reads them.
      const cutOff = logged(daemon, "closing a connection that stopped reading its output");
      const hog = await TestClient.connect(daemon.url, daemon.token);
      (hog.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      for (let i = 0; i < 300; i++)
        hog.sendRaw(JSON.stringify({ id: i, action: "jobs.output", job: big.id, from: (i % 16) * 1024 * 1024 }));
      await cutOff;

      // Its maxConnections slot is free again; the waiter, held longer than the hog, is still there.
      const again = await daemon.client();
      expect((await again.ok("state.info")).name).toBe("hotline");
      expect(waiterClosed).toBe(false);
      await client.ok("jobs.cancel", { job: sleeper.id });
      await waiter.waitFor((f) => f.id === 299, 30_000, "the last jobs.wait reply");
      expect(waiter.frames.filter((f) => f.ok === true)).toHaveLength(300);
      await Promise.all([again.close(), waiter.close(), client.close()]);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 60_000);
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

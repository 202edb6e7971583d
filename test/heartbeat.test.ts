import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { TestDaemon } from "./helpers/daemon.js";

describe("heartbeat", () => {
  it("disconnects a client that stops answering pings, and keeps one that answers", async () => {
    const daemon = await TestDaemon.start({ args: ["--heartbeat-ms", "100"] });
    try {
      const open = (autoPong: boolean): Promise<WebSocket> =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(daemon.url, { headers: { authorization: `Bearer ${daemon.token}` }, autoPong });
          ws.once("open", () => resolve(ws));
          ws.once("error", reject);
        });
      const silent = await open(false);
      const alive = await open(true);
      let pings = 0;
      alive.on("ping", () => pings++);
      const closed = await new Promise<number>((resolve) => silent.once("close", (code) => resolve(code)));
      expect(closed).toBe(1006); // terminated, no closing handshake
      expect(pings).toBeGreaterThanOrEqual(1);
      expect(alive.readyState).toBe(WebSocket.OPEN);
      // The live client still gets answers after several heartbeats.
      const reply = await new Promise<Record<string, unknown>>((resolve) => {
        alive.once("message", (d) => resolve(JSON.parse(d.toString())));
        alive.send(JSON.stringify({ id: 1, action: "state.info" }));
      });
      expect(reply.ok).toBe(true);
      alive.close();
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

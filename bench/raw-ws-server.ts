import { spawn } from "node:child_process";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * The floors of the core rows: a raw `ws` server, run in a process of its own (as the daemon is),
 * that does only what the wire demands and as fast as `ws` allows.
 *  - a JSON request: parsed, and answered with the reply object the daemon gave (set by `reply:`);
 *  - `binary:N`: N bytes in 1 MiB binary frames, sent while bufferedAmount ≤ 4 MiB, pumping again
 *    on setImmediate, then the text frame `done`;
 *  - `json:N`: N bytes of ASCII as 64 KiB JSON `job.output` events (stringified per frame, as any
 *    JSON sender must), same pumping, then `done`;
 *  - `spawn`: times `spawn("true")` to its exit in this lean process (no daemon's memory to copy on
 *    fork) and answers `spawned:<ms>`;
 *  - `run`: spawns `true` and answers `ran` at its exit (the floor of a job's round trip, timed by the client).
 */
const FRAME = 1024 * 1024;
const JSON_FRAME = 64 * 1024;
const WINDOW = 4 * 1024 * 1024;

function pump(ws: WebSocket, total: number, size: number, frame: (offset: number, n: number) => Buffer | string): void {
  let sent = 0;
  const step = (): void => {
    while (sent < total && ws.bufferedAmount <= WINDOW) {
      const n = Math.min(size, total - sent);
      ws.send(frame(sent, n));
      sent += n;
    }
    if (sent < total) setImmediate(step);
    else ws.send("done");
  };
  step();
}

const chunk = Buffer.alloc(FRAME, 97);
const text = "a".repeat(JSON_FRAME);
let reply: object = {};
const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
wss.on("listening", () => process.stdout.write(`ws://127.0.0.1:${(wss.address() as { port: number }).port}\n`));
wss.on("connection", (ws) =>
  ws.on("message", (data: Buffer) => {
    const message = data.toString();
    if (message.startsWith("reply:")) reply = JSON.parse(message.slice(6)) as object;
    else if (message === "spawn") {
      const t = performance.now();
      spawn("true").once("exit", () => ws.send(`spawned:${performance.now() - t}`));
    } else if (message === "run") spawn("true").once("exit", () => ws.send("ran"));
    else if (message.startsWith("binary:"))
      pump(ws, Number(message.slice(7)), FRAME, (_, n) => (n === FRAME ? chunk : chunk.subarray(0, n)));
    else if (message.startsWith("json:"))
      pump(ws, Number(message.slice(5)), JSON_FRAME, (offset, n) =>
        JSON.stringify({
          event: "job.output",
          job: "j-raw",
          stream: "stdout",
          offset,
          data: n === JSON_FRAME ? text : text.slice(0, n),
          encoding: "utf8",
        }),
      );
    else {
      const request = JSON.parse(message) as { id?: number };
      ws.send(JSON.stringify({ id: request.id, ...reply }));
    }
  }),
);

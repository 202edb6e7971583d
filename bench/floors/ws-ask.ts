import { readFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";

/**
 * The floor of `hotline state info` (bench/startup.ts): a bare Node script that finds the daemon
 * as the CLI does (daemon.json and the token file), opens one WebSocket, asks `state.info` and
 * prints the reply.
 */
const { url } = JSON.parse(readFileSync(join(process.env.HOTLINE_STATE_DIR!, "daemon.json"), "utf8")) as { url: string };
const token = readFileSync(join(process.env.HOTLINE_CONFIG_DIR!, "token"), "utf8").trim();
const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
ws.on("open", () => ws.send(JSON.stringify({ id: 1, action: "state.info" })));
ws.on("message", (data: Buffer) => {
  process.stdout.write(`${data.toString()}\n`);
  ws.close();
});

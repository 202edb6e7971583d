import { WebSocketServer } from "ws";

/**
 * The floor of the daemon's start (bench/startup.ts): a bare Node script that loads `ws`, listens
 * on a loopback port and says so on stderr, as the daemon logs "listening".
 */
const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
wss.on("listening", () => process.stderr.write(`{"msg":"listening","port":${(wss.address() as { port: number }).port}}\n`));

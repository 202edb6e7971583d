import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer } from "ws";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { TokenStore } from "../tokens/store.js";
import { Connection } from "./connection.js";
import { checkUpgrade } from "./upgrade-guard.js";

export interface ServerOptions {
  host: string;
  port: number;
  maxPayloadBytes: number;
  heartbeatMs: number;
  allowedOrigins: readonly string[];
  tokens: TokenStore;
  dispatcher: Dispatcher;
  log: Logger;
}

/** Frames past the soft limit get an error reply; past this multiple the socket is closed (1009). */
const HARD_LIMIT_FACTOR = 16;
const CLOSE_GRACE_MS = 1000;

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code, message } });
  const reason = status === 401 ? "Unauthorized" : "Forbidden";
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** The HTTP server that only upgrades authorised, non-browser clients to WebSocket connections. */
export class HotlineServer {
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<Connection>();
  private heartbeat: NodeJS.Timeout | undefined;
  private nextId = 1;

  constructor(private readonly options: ServerOptions) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes * HARD_LIMIT_FACTOR, perMessageDeflate: false });
    this.http = createServer((_req, res) => {
      res.writeHead(426, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ ok: false, error: { code: "invalid_request", message: "this endpoint speaks WebSocket only" } }));
    });
    this.http.on("upgrade", (req, socket, head) => {
      const verdict = checkUpgrade(req, options.tokens, options.allowedOrigins);
      if (!verdict.ok) {
        options.log.info({ status: verdict.status, origin: req.headers.origin, remote: req.socket.remoteAddress }, "upgrade refused");
        refuse(socket, verdict.status, verdict.code, verdict.message);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const id = `c${this.nextId++}`;
        const log = options.log.child({ conn: id });
        const connection = new Connection(ws, id, verdict.scope, options.dispatcher, options.maxPayloadBytes, log);
        this.connections.add(connection);
        ws.on("close", () => this.connections.delete(connection));
        log.debug({ scope: verdict.scope, token: verdict.tokenId }, "connection opened");
      });
    });
  }

  /** Listens and resolves with the ws:// URL actually bound (port 0 picks a free port). */
  listen(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.http.once("error", reject);
      this.http.listen(this.options.port, this.options.host, () => {
        const address = this.http.address() as AddressInfo;
        const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
        this.heartbeat = setInterval(() => this.connections.forEach((c) => c.heartbeat()), this.options.heartbeatMs);
        this.heartbeat.unref();
        resolve(`ws://${host}:${address.port}`);
      });
    });
  }

  /**
   * Stops accepting, closes every connection with 1001 (going away), and closes the listener; a
   * client that does not finish the closing handshake within a second is cut off.
   */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const c of this.connections) c.close(1001, "daemon shutting down");
    const cutOff = setTimeout(() => this.connections.forEach((c) => c.terminate()), CLOSE_GRACE_MS);
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
    clearTimeout(cutOff);
  }
}

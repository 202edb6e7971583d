import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer } from "ws";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { TokenStore } from "../tokens/store.js";
import { Connection } from "./connection.js";
import { checkUpgrade } from "./upgrade-guard.js";
import { routeFor, routeHttp, type HttpRoute, type UpgradeRoute } from "./http-routes.js";
import { isLinkProtocol, PAGE_SUBPROTOCOL } from "./link-protocol.js";
import type { PageAccess } from "./page-access.js";

export interface ServerOptions {
  host: string;
  port: number;
  maxPayloadBytes: number;
  heartbeatMs: number;
  maxConnections: number;
  allowedOrigins: readonly string[];
  tokens: TokenStore;
  dispatcher: Dispatcher;
  log: Logger;
  /** Plain-HTTP endpoints beside the WebSocket (see http-routes.ts); none by default. */
  httpRoutes?: readonly HttpRoute[];
  /** WebSocket upgrades that are not protocol connections (the CDP and VNC relays), by path. */
  upgradeRoutes?: readonly UpgradeRoute[];
  /** Enables browser-link sockets (token in Sec-WebSocket-Protocol) from the daemon's own pages. */
  pages?: PageAccess;
}

/**
 * Frames past the soft limit get an error reply; past this multiple the socket is closed (1009).
 * It also bounds what one client can make the daemon buffer of an unfinished message, so the
 * daemon-wide worst case is maxConnections × 2 × maxPayloadBytes (64 × 2 MiB by default).
 */
const HARD_LIMIT_FACTOR = 2;
const CLOSE_GRACE_MS = 1000;

const STATUS_TEXT: Record<number, string> = { 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable" };

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code, message } });
  const reason = STATUS_TEXT[status] ?? "Error";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The HTTP server that only upgrades authorised, non-browser clients to WebSocket connections. */
export class HotlineServer {
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<Connection>();
  private heartbeat: NodeJS.Timeout | undefined;
  private nextId = 1;

  constructor(private readonly options: ServerOptions) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayloadBytes * HARD_LIMIT_FACTOR,
      perMessageDeflate: false,
      // A page offers ["hotline", "hotline.token.…"] and gets "hotline", so the token is never echoed;
      // any other client gets its first offer, as ws does by default.
      handleProtocols: (offered) =>
        offered.has(PAGE_SUBPROTOCOL) ? PAGE_SUBPROTOCOL : ([...offered].find((p) => !isLinkProtocol(p)) ?? false),
    });
    this.http = createServer(routeHttp(options.httpRoutes ?? [], options.log));
    options.tokens.onRevoke((tokenId) =>
      // After the current turn, so the revoking request's own reply goes out first.
      setImmediate(() => this.connections.forEach((c) => c.tokenId === tokenId && c.revoke(`token ${tokenId} has been revoked`))),
    );
    this.http.on("upgrade", (req, socket, head) => {
      socket.on("error", () => socket.destroy());
      try {
        this.upgrade(req, socket, head);
      } catch (err) {
        // One failed upgrade costs that client its socket, never the daemon.
        options.log.error({ err }, "upgrade failed");
        socket.destroy();
      }
    });
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const options = this.options;
    const route = routeFor(options.upgradeRoutes ?? [], req.url);
    if (route) return route.upgrade(req, socket, head);
    const verdict = checkUpgrade(req, options.tokens, options.allowedOrigins, options.pages);
    if (!verdict.ok) {
      options.log.info({ status: verdict.status, origin: req.headers.origin, remote: req.socket.remoteAddress }, "upgrade refused");
      refuse(socket, verdict.status, verdict.code, verdict.message);
      return;
    }
    // ws completes a noServer upgrade synchronously, so the set is exact here.
    if (this.connections.size >= options.maxConnections) {
      options.log.warn({ maxConnections: options.maxConnections, remote: req.socket.remoteAddress }, "upgrade refused: connection limit");
      const message = `the daemon already serves ${options.maxConnections} connections (maxConnections, --max-connections); close one or raise the limit`;
      refuse(socket, 503, "limit_exceeded", message);
      return;
    }
    // While a connection's requests are held unread (its budget) its pongs go unread too, so the
    // heartbeat judges it only by its output: TCP keep-alive finds a peer that vanished without a
    // reset while nothing is queued for it.
    req.socket.setKeepAlive(true, options.heartbeatMs);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const id = `c${this.nextId++}`;
      const log = options.log.child({ conn: id });
      const { tokenId, expiresAt } = verdict;
      const validity = (): string | undefined =>
        expiresAt !== undefined && expiresAt <= Date.now() ? `token ${tokenId} has expired` : options.tokens.invalidReason(tokenId);
      // The slot is released by the first close listener, so nothing the connection's own cleanup
      // does can keep it (close cannot fire before the constructor returns).
      ws.on("close", () => this.connections.delete(connection));
      const connection = new Connection(ws, id, verdict.scope, tokenId, options.dispatcher, options.maxPayloadBytes, validity, log);
      if (expiresAt !== undefined) connection.expireAt(expiresAt);
      this.connections.add(connection);
      log.debug({ scope: verdict.scope, token: tokenId }, "connection opened");
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

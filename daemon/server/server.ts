import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
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
import { UnprovenSockets, unprovenBudget } from "./unproven-sockets.js";
import { openFileLimit } from "../util/descriptors.js";
import { type HostClaim, sortByHost } from "./host-sorter.js";
import { PacedIntake } from "./paced-intake.js";

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
  /** Sockets not yet authorised, at most (see UnprovenSockets); from the open-file limit unless said. */
  maxUnproven?: number;
  /** Connections whose first request's Host it claims (the previews) are its whole; it never reaches the API. */
  hostRoutes?: HostClaim;
}

/**
 * Frames past the soft limit get an error reply; past this multiple the socket is closed (1009).
 * It also bounds what one client can make the daemon buffer of an unfinished message, so the
 * daemon-wide worst case is maxConnections × 2 × maxPayloadBytes (64 × 2 MiB by default).
 */
const HARD_LIMIT_FACTOR = 2;
const CLOSE_GRACE_MS = 1000;
/**
 * A request's headers must arrive within this, its whole body within REQUEST_TIMEOUT_MS (checked
 * every CHECK_INTERVAL_MS): a client that starts a request and never finishes it is cut off soon,
 * not after Node's defaults of one and five minutes.
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const CHECK_INTERVAL_MS = 1_000;
/** A quarter of maxConnections (at least one, unless there is only one) is kept for manage tokens: observers never fill them all. */
const MANAGE_RESERVE = 1 / 4;
/** The least time between two warnings about the same kind of overload. */
const WARN_INTERVAL_MS = 10_000;

const STATUS_TEXT: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  421: "Misdirected Request",
  503: "Service Unavailable",
};
/** A preview host named on a connection that began as the daemon's own: previews are served on connections of their own. */
const MISDIRECTED = "this connection is the daemon's own; a preview host is served on a connection that starts with it";

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code, message } });
  const reason = STATUS_TEXT[status] ?? "Error";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The HTTP server that only upgrades authorised, non-browser clients to WebSocket connections. */
export class HotlineServer {
  /** Accepts connections and sorts them by host (see host-sorter.ts); `http` serves the daemon's own. */
  private readonly front: NetServer;
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<Connection>();
  /** Every accepted socket, so a shutdown can end those still open after its grace. */
  private readonly sockets = new Set<Socket>();
  private readonly unproven: UnprovenSockets;
  private readonly intake: PacedIntake;
  private heartbeat: NodeJS.Timeout | undefined;
  private nextId = 1;
  private listening = false;
  private readonly lastWarned = new Map<string, number>();

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
    this.unproven = new UnprovenSockets(options.maxUnproven ?? unprovenBudget(openFileLimit()), (closed) =>
      this.warn("unproven", { maxUnproven: this.unproven.max, closed }, "closing the oldest unauthorised connection: too many at once"),
    );
    this.http = createServer(
      { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: CHECK_INTERVAL_MS },
      this.refuseMisdirected(routeHttp(options.httpRoutes ?? [], options.log, this.unproven)),
    );
    this.intake = new PacedIntake((socket) => this.unproven.has(socket));
    const toHttp = (socket: Socket, read?: Buffer): void => {
      this.intake.adopt(socket, read);
      this.http.emit("connection", socket);
      this.intake.start(socket);
    };
    this.front = createNetServer({ noDelay: true, allowHalfOpen: true }, sortByHost(toHttp, options.hostRoutes, this.unproven));
    this.front.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    // Past listen, the server's errors are failed accepts (EMFILE, ENFILE): libuv drops that
    // connection and keeps accepting, so the daemon serves again as soon as descriptors free up.
    this.front.on("error", (err) => {
      if (this.listening) this.warn("accept", { err }, "a connection could not be accepted");
    });
    options.tokens.onRevoke((tokenId) =>
      // After the current turn, so the revoking request's own reply goes out first.
      setImmediate(() => this.connections.forEach((c) => c.tokenId === tokenId && c.revoke(`token ${tokenId} has been revoked`))),
    );
    this.http.on("upgrade", (req, socket, head) => {
      this.intake.release(socket as Socket);
      socket.on("error", () => socket.destroy());
      try {
        if (options.hostRoutes?.claimsHost(req.headers.host)) return refuse(socket, 421, "invalid_request", MISDIRECTED);
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
    // Upgrade routes (CDP, VNC) check their token at once and end a refused socket there, so the
    // socket leaves the unproven budget now: a long-lived relay must never be its oldest member.
    if (route) {
      this.unproven.prove(socket as Socket);
      return route.upgrade(req, socket, head);
    }
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
    const reserve = options.maxConnections > 1 ? Math.max(1, Math.floor(options.maxConnections * MANAGE_RESERVE)) : 0;
    const observeMax = options.maxConnections - reserve;
    if (verdict.scope === "observe" && [...this.connections].filter((c) => c.state.scope === "observe").length >= observeMax) {
      const message = `observe tokens already hold ${observeMax} of the ${options.maxConnections} connections, the most they may (the rest is kept for manage tokens); close one`;
      refuse(socket, 503, "limit_exceeded", message);
      return;
    }
    this.unproven.prove(req.socket as Socket);
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

  /** A request on the daemon's own connection that names a preview host is answered 421, never served. */
  private refuseMisdirected(
    routes: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    const hosts = this.options.hostRoutes;
    if (!hosts) return routes;
    return (req, res) => {
      let claimed: boolean;
      try {
        claimed = hosts.claimsHost(req.headers.host);
      } catch (err) {
        // A Host header the router cannot read costs that request its answer, never the daemon.
        this.options.log.error({ err }, "host routing failed");
        return void res.destroy();
      }
      if (!claimed) return routes(req, res);
      const body = JSON.stringify({ ok: false, error: { code: "invalid_request", message: MISDIRECTED } });
      res.writeHead(421, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), Connection: "close" });
      res.end(body);
    };
  }

  /** A warning of one kind at most every WARN_INTERVAL_MS: an overload must not flood the log too. */
  private warn(kind: string, fields: object, message: string): void {
    const now = Date.now();
    if (now - (this.lastWarned.get(kind) ?? 0) < WARN_INTERVAL_MS) return;
    this.lastWarned.set(kind, now);
    this.options.log.warn(fields, message);
  }

  /** Listens and resolves with the ws:// URL actually bound (port 0 picks a free port). */
  listen(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.front.once("error", reject);
      this.front.listen(this.options.port, this.options.host, () => {
        // The HTTP server is fed connections, not listening itself: this starts its header and request timeouts.
        this.http.emit("listening");
        const address = this.front.address() as AddressInfo;
        const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
        this.listening = true;
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
    const cutOff = setTimeout(() => {
      this.connections.forEach((c) => c.terminate());
      this.sockets.forEach((s) => s.destroy());
    }, CLOSE_GRACE_MS);
    this.http.closeIdleConnections();
    await new Promise<void>((resolve) => this.front.close(() => resolve()));
    this.http.close();
    clearTimeout(cutOff);
  }
}

import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { TokenStore } from "../tokens/store.js";
import { PreviewGate, presentedToken, previewCookies, stripCookie, stripQueryToken } from "./access.js";
import { PreviewConnection, type RequestHandler } from "./connection.js";
import { Exchange } from "./exchange.js";
import { type ForwardRequest, type ForwardTarget, requestHead } from "./forward.js";
import { requestBodyEnd } from "./http1/body.js";
import { HeadError, hasToken, type RequestHead } from "./http1/head.js";
import type { PreviewHosts } from "./hosts.js";
import { busyPage, malformedResponse, rawResponse, refusedPage } from "./pages.js";
import { originForm } from "./target.js";
import { openTunnel } from "./tunnel.js";
import { UpstreamPool } from "./upstream-pool.js";

/** The named bounds of the preview proxy. */
export interface PreviewLimits {
  /** Proxied HTTP requests in flight at once, daemon-wide; past it a 503 page. */
  maxRequests: number;
  /** The same for one port: an app that never answers holds at most these, not the daemon's whole budget. */
  maxRequestsPerPort: number;
  /** Proxied WebSockets (any upgrade) open at once; past it a 503. */
  maxWebSockets: number;
  /** Keep-alive sockets to one app port (requests beyond wait for one, within maxRequests). */
  socketsPerPort: number;
  /** A proxied request whose sockets carry nothing for this long is cut off (both sides). */
  idleMs: number;
  /** The same for a WebSocket (HMR sockets sit quiet between edits). */
  webSocketIdleMs: number;
  /** The largest response head an app may send. */
  maxHeaderBytes: number;
}

export const DEFAULT_PREVIEW_LIMITS: PreviewLimits = {
  maxRequests: 512,
  maxRequestsPerPort: 128,
  maxWebSockets: 128,
  socketsPerPort: 64,
  idleMs: 5 * 60_000,
  webSocketIdleMs: 60 * 60_000,
  maxHeaderBytes: 64 * 1024,
};

/** A Host that is a plain authority (name or address, port): the redirect's origin is then the one the client used. */
const AUTHORITY = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** How often sockets of expired links are looked for (and closed). */
const SWEEP_MS = 1000;

/** Where a socket's requests were let in: the token and until when. */
interface Grant {
  tokenId: string;
  expiresAt: number;
}

/** How the daemon's front door counts a socket: authorised (out of the unproven budget) or waiting again. */
export interface SocketProof {
  prove(): void;
  unprove(): void;
}

/**
 * The preview proxy: connections whose first request's Host names a preview (see PreviewHosts)
 * are the proxy's whole, and each request on them goes to that port on loopback once its token
 * (link query, header or cookie) opens that port. It reads HTTP/1.1 heads itself, strictly, and
 * streams bodies through with backpressure (see Exchange); upgrades become a byte tunnel, so the
 * app's own WebSocket handshake (Vite's HMR and its `token`) passes as it was. A revoked or
 * expired link's sockets are closed. It never reaches the daemon's API, and refuses the daemon's
 * own port.
 */
export class PreviewProxy implements RequestHandler {
  private readonly limits: PreviewLimits;
  private readonly gate: PreviewGate;
  readonly pool: UpstreamPool;
  /** Client sockets (HTTP keep-alive and tunnels) by the grant they were last let in with. */
  private readonly grants = new Map<Socket, Grant>();
  private readonly tunnels = new Set<Socket>();
  private readonly proofs = new WeakMap<Socket, SocketProof>();
  /** Where a port was last reached (127.0.0.1, ::1 …), until a connection to it is refused. */
  private readonly addresses = new Map<number, string>();
  /** Lookups under way, shared by the requests that arrive meanwhile (a page's first burst). */
  private readonly lookups = new Map<number, Promise<string | undefined>>();
  private inFlight = 0;
  private readonly inFlightByPort = new Map<number, number>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly hosts: PreviewHosts,
    tokens: TokenStore,
    private readonly ports: { address(port: number): Promise<string | undefined> },
    readonly log: Logger,
    limits: Partial<PreviewLimits> = {},
  ) {
    this.limits = { ...DEFAULT_PREVIEW_LIMITS, ...limits };
    this.gate = new PreviewGate(tokens);
    this.pool = new UpstreamPool(this.limits.socketsPerPort);
    // After the current turn, so the revoking request's own reply goes out first.
    tokens.onRevoke((tokenId) => setImmediate(() => this.cut((g) => g.tokenId === tokenId)));
  }

  get maxResponseHead(): number {
    return this.limits.maxHeaderBytes;
  }

  get idleMs(): number {
    return this.limits.idleMs;
  }

  /** Whether a Host header names a preview host (then the connection is the proxy's, and nothing else of the daemon's sees it). */
  claimsHost(host: string | undefined): boolean {
    return this.hosts.ofHost(host) !== undefined;
  }

  /** Takes a client connection whose first bytes (at least its first request head) are `first`. */
  serve(socket: Socket, first: Buffer, proof: SocketProof): void {
    this.proofs.set(socket, proof);
    try {
      new PreviewConnection(socket, this, first);
    } catch (err) {
      // One failed connection costs that client its answer, never the daemon.
      this.log.error({ err }, "preview connection failed");
      socket.destroy();
    }
  }

  handle(conn: PreviewConnection, head: RequestHead, rest: Buffer): void {
    const hostHeader = head.host;
    if (hostHeader === undefined) throw new HeadError(400, "a request without a Host header");
    const host = this.hosts.ofHost(hostHeader);
    if (!host) return conn.answer(malformedResponse(421, `${hostHeader.slice(0, 100)} is not this connection's preview host`), true);
    const port = host.port;
    const bodyEnd = requestBodyEnd(head);
    const upgrade = head.upgrade !== undefined && hasToken(head.connection, "upgrade");
    // An answer of the daemon's own to a request whose body was not read ends the connection.
    const closeIfBody = bodyEnd.kind !== "none" || upgrade;
    if (port === this.hosts.ownPort) return conn.page(refusedPage(port, "port"), true);
    const query = stripQueryToken(originForm(head.method, head.target, hostHeader));
    const cookies = stripCookie(head.cookie);
    const presented = presentedToken(head.previewToken, query.token, cookies.token);
    const verdict = this.gate.check(presented?.token, port, Date.now(), conn.gateMemo);
    if (!verdict.ok) return conn.page(refusedPage(port, verdict.reason, verdict.tokenPort), closeIfBody, rest);
    const client = conn.client;
    this.proofs.get(client)?.prove(); // a link's request: no longer one of the daemon's unauthorised sockets
    const grant = { tokenId: verdict.tokenId, expiresAt: verdict.expiresAt };
    this.hold(client, grant);
    // A browser's first request of the link: trade the token for a cookie on this host and drop it
    // from the address bar. Any other client (curl -L, a script) is answered at once, as the link
    // was given: it may keep no cookie, and would be refused at the address without the token.
    if (presented!.source === "query" && (head.method === "GET" || head.method === "HEAD") && isBrowser(head.headers)) {
      const headers = {
        // Absolute, on the preview's own origin: a path like `//evil.example/` is never another site.
        Location: `${AUTHORITY.test(hostHeader) ? `${host.proto}://${hostHeader}` : this.hosts.origin(port)}${query.url}`,
        "Set-Cookie": previewCookies(presented!.token, grant.expiresAt, host.secure),
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "Content-Length": 0,
        ...(closeIfBody ? { Connection: "close" } : {}),
      };
      return conn.answer(rawResponse(302, "Found", headers), closeIfBody, rest);
    }
    const target: ForwardTarget = {
      port,
      proto: host.proto,
      publicOrigin: `${host.proto}://${hostHeader}`,
      publicHost: hostHeader,
      remoteAddress: client.remoteAddress ?? "",
    };
    const forward: ForwardRequest = {
      method: head.method,
      path: query.url,
      minor: head.minor,
      headers: head.headers,
      connection: head.connection,
      cookie: cookies.cookie,
      upgrade,
    };
    if (upgrade) {
      if (this.tunnels.size >= this.limits.maxWebSockets) return conn.page(busyPage(port, "WebSockets", this.limits.maxWebSockets), true);
      conn.release();
      return openTunnel(client, requestHead(forward, target), rest, port, this.tunnelContext());
    }
    if (this.inFlight >= this.limits.maxRequests) return conn.page(busyPage(port, "requests", this.limits.maxRequests), closeIfBody, rest);
    const portInFlight = this.inFlightByPort.get(port) ?? 0;
    if (portInFlight >= this.limits.maxRequestsPerPort)
      return conn.page(busyPage(port, "requests", this.limits.maxRequestsPerPort, true), closeIfBody, rest);
    const end = bodyEnd.scan(rest, 0);
    const bodyDone = end >= 0;
    if (bodyDone && end < rest.length) conn.keepNext(rest.subarray(end));
    const method = head.method;
    const exchange = new Exchange(conn, {
      method,
      head: requestHead(forward, target),
      body: bodyDone ? rest.subarray(0, end) : rest,
      bodyEnd,
      bodyDone,
      closeAfter: head.minor === 0 || hasToken(head.connection, "close"),
      retryable: (method === "GET" || method === "HEAD" || method === "OPTIONS") && bodyEnd.kind === "none",
      target,
    });
    this.inFlight++;
    this.inFlightByPort.set(port, portInFlight + 1);
    conn.run(exchange);
  }

  ended(port: number): void {
    this.inFlight--;
    const left = (this.inFlightByPort.get(port) ?? 1) - 1;
    if (left > 0) this.inFlightByPort.set(port, left);
    else this.inFlightByPort.delete(port);
  }

  idle(client: Socket): void {
    this.proofs.get(client)?.unprove();
  }

  /** Closes every proxied connection (shutdown). */
  close(): void {
    this.cut(() => true);
    this.pool.close();
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private tunnelContext() {
    return {
      address: (port: number) => this.address(port),
      forget: (port: number) => this.forget(port),
      tunnels: this.tunnels,
      idleMs: this.limits.webSocketIdleMs,
      log: this.log,
    };
  }

  /** Where to reach a port: the last address that worked, else the listen table's. */
  address(port: number): Promise<string | undefined> | string | undefined {
    const known = this.addresses.get(port);
    if (known !== undefined) return known;
    let lookup = this.lookups.get(port);
    if (!lookup) {
      lookup = this.ports
        .address(port)
        .then((found) => {
          if (found !== undefined) this.addresses.set(port, found);
          return found;
        })
        .finally(() => this.lookups.delete(port));
      this.lookups.set(port, lookup);
    }
    return lookup;
  }

  forget(port: number): void {
    this.addresses.delete(port);
  }

  /** Remembers which grant a client socket uses, so revoking or expiry closes it. */
  private hold(socket: Socket, grant: Grant): void {
    if (!this.grants.has(socket)) socket.once("close", () => this.grants.delete(socket));
    this.grants.set(socket, grant);
    this.sweeper ??= setInterval(() => {
      const now = Date.now();
      this.cut((g) => g.expiresAt <= now);
      if (!this.grants.size && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, SWEEP_MS).unref();
  }

  private cut(match: (grant: Grant) => boolean): void {
    for (const [socket, grant] of this.grants) if (match(grant)) socket.destroy();
  }
}

/**
 * Whether a request comes from a browser: they send `Sec-Fetch-Mode` (to secure origins, which
 * `*.localhost` and https are) and `Upgrade-Insecure-Requests` on navigations (to plain-http ones
 * too). curl, wget and HTTP libraries send neither.
 */
function isBrowser(raw: readonly string[]): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if ((name.length === 14 || name.length === 25) && /^(sec-fetch-mode|upgrade-insecure-requests)$/i.test(name)) return true;
  }
  return false;
}

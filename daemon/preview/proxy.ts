import { Agent, type ClientRequest, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { TokenStore } from "../tokens/store.js";
import { noteShortLivedBytes } from "../util/young-gc.js";
import { PreviewGate, presentedToken, previewCookies, stripCookie, stripQueryToken } from "./access.js";
import { type ForwardTarget, requestHeaders, responseHeaders } from "./forward.js";
import type { PreviewHost, PreviewHosts } from "./hosts.js";
import { busyPage, failedPage, type PreviewPage, refusedPage, refuseUpgrade, sendPage, waitingPage } from "./pages.js";

/** The named bounds of the preview proxy. */
export interface PreviewLimits {
  /** Proxied HTTP requests in flight at once, daemon-wide; past it a 503 page. */
  maxRequests: number;
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
  maxWebSockets: 128,
  socketsPerPort: 64,
  idleMs: 5 * 60_000,
  webSocketIdleMs: 60 * 60_000,
  maxHeaderBytes: 64 * 1024,
};

/** An idle keep-alive socket to an app is closed before the app's own timeout (Node's default is 5 s), so a reuse rarely races it. */
const FREE_SOCKET_MS = 4000;
/** How often sockets of expired links are looked for (and closed). */
const SWEEP_MS = 1000;

/** Every chunk read from a socket is a fresh buffer that dies once written on: counted, so V8 collects them early. */
const countShortLived = (chunk: Buffer): void => noteShortLivedBytes(chunk.length);

/** Where a socket's requests were let in: the token and until when. */
interface Grant {
  tokenId: string;
  expiresAt: number;
}

/** One authorised preview request: the port, what the app is told, and the URL and cookie without the daemon's token. */
interface Admitted {
  host: PreviewHost;
  /** The token came in the link's query (the first request of a link). */
  fromQuery: boolean;
  token: string;
  target: ForwardTarget;
  url: string;
  cookie?: string;
  grant: Grant;
}

function isIdempotentWithoutBody(req: IncomingMessage): boolean {
  const method = req.method ?? "GET";
  return (
    (method === "GET" || method === "HEAD" || method === "OPTIONS") &&
    !req.headers["transfer-encoding"] &&
    (req.headers["content-length"] === undefined || req.headers["content-length"] === "0")
  );
}

/**
 * The preview proxy: requests and upgrades whose Host names a preview (see PreviewHosts) go to that
 * port on loopback, once the token (link query, header or cookie) opens that port. Bodies stream
 * both ways through pipes (backpressure, no buffering); upgrades become a byte tunnel, so the app's
 * own WebSocket handshake (Vite's HMR and its `token`) passes as it was. A revoked or expired
 * link's sockets are closed. It never reaches the daemon's API: it claims only preview hosts,
 * and refuses the daemon's own port.
 */
export class PreviewProxy {
  private readonly limits: PreviewLimits;
  private readonly gate: PreviewGate;
  private readonly agent: Agent;
  /** Client sockets (HTTP keep-alive and tunnels) by the grant they were last let in with. */
  private readonly grants = new Map<Duplex, Grant>();
  private readonly tunnels = new Set<Socket>();
  /** Where a port was last reached (127.0.0.1, ::1 …), until a connection to it is refused. */
  private readonly addresses = new Map<number, string>();
  /** Lookups under way, shared by the requests that arrive meanwhile (a page's first burst). */
  private readonly lookups = new Map<number, Promise<string | undefined>>();
  private inFlight = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly hosts: PreviewHosts,
    tokens: TokenStore,
    private readonly ports: { address(port: number): Promise<string | undefined> },
    private readonly log: Logger,
    limits: Partial<PreviewLimits> = {},
  ) {
    this.limits = { ...DEFAULT_PREVIEW_LIMITS, ...limits };
    this.gate = new PreviewGate(tokens);
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: this.limits.socketsPerPort,
      maxFreeSockets: this.limits.socketsPerPort,
      timeout: FREE_SOCKET_MS,
      scheduling: "lifo",
    });
    // After the current turn, so the revoking request's own reply goes out first.
    tokens.onRevoke((tokenId) => setImmediate(() => this.cut((g) => g.tokenId === tokenId)));
  }

  /** Whether the request is addressed to a preview host (then nothing else of the daemon's sees it). */
  claims(req: IncomingMessage): boolean {
    return this.hosts.of(req) !== undefined;
  }

  request(req: IncomingMessage, res: ServerResponse, admit: () => void = () => {}): void {
    try {
      this.serve(req, res, admit);
    } catch (err) {
      // One failed request costs that client its answer, never the daemon.
      this.log.error({ err }, "preview request failed");
      res.destroy();
    }
  }

  private serve(req: IncomingMessage, res: ServerResponse, admitSocket: () => void): void {
    const admitted = this.admit(req);
    if ("status" in admitted) return sendPage(req, res, admitted);
    admitSocket(); // a link's request: no longer one of the daemon's unauthorised sockets
    const { host, url, grant } = admitted;
    // The link's first request: trade the token for a cookie on this host and drop it from the address bar.
    if (admitted.fromQuery && (req.method === "GET" || req.method === "HEAD")) {
      res.writeHead(302, {
        Location: url,
        "Set-Cookie": previewCookies(admitted.token, grant.expiresAt, host.secure),
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "Content-Length": 0,
      });
      return void res.end();
    }
    if (this.inFlight >= this.limits.maxRequests) return sendPage(req, res, busyPage(host.port, "requests", this.limits.maxRequests));
    this.inFlight++;
    res.once("close", () => this.inFlight--);
    this.hold(req.socket, grant);
    void this.forward(req, res, admitted, true).catch((err: unknown) => {
      this.log.error({ err, port: host.port }, "preview request failed");
      res.destroy();
    });
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, admitSocket: () => void = () => {}): void {
    const admitted = this.admit(req);
    if ("status" in admitted) return refuseUpgrade(socket, admitted);
    admitSocket();
    const port = admitted.host.port;
    if (this.tunnels.size >= this.limits.maxWebSockets)
      return refuseUpgrade(socket, busyPage(port, "WebSockets", this.limits.maxWebSockets));
    void this.tunnel(req, socket as Socket, head, admitted).catch((err: unknown) => {
      this.log.error({ err, port }, "preview upgrade failed");
      socket.destroy();
    });
  }

  /** Closes every proxied connection (shutdown). */
  close(): void {
    this.cut(() => true);
    this.agent.destroy();
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** The preview a request is for and its verdict: an admitted request, or the page that refuses it. */
  private admit(req: IncomingMessage): Admitted | PreviewPage {
    const host = this.hosts.of(req)!;
    const port = host.port;
    if (port === this.hosts.ownPort) return refusedPage(port, "port");
    const query = stripQueryToken(req.url ?? "/");
    const cookies = stripCookie(req.headers.cookie);
    const presented = presentedToken(req, query.token, cookies.token);
    const verdict = this.gate.check(presented?.token, port);
    if (!verdict.ok) return refusedPage(port, verdict.reason, verdict.tokenPort);
    const target: ForwardTarget = { port, proto: host.proto, publicOrigin: `${host.proto}://${req.headers.host}` };
    const grant = { tokenId: verdict.tokenId, expiresAt: verdict.expiresAt };
    return {
      host,
      fromQuery: presented!.source === "query",
      token: presented!.token,
      target,
      url: query.url,
      ...(cookies.cookie !== undefined ? { cookie: cookies.cookie } : {}),
      grant,
    };
  }

  /** Sends one request to the app and streams its answer back; `retry` once on a keep-alive socket the app had just closed. */
  private async forward(req: IncomingMessage, res: ServerResponse, a: Admitted, retry: boolean): Promise<void> {
    const port = a.host.port;
    const address = await this.address(port);
    if (res.destroyed) return;
    if (address === undefined) return sendPage(req, res, waitingPage(port));
    let answered = false;
    const upstream: ClientRequest = httpRequest({
      host: address,
      port,
      method: req.method,
      path: a.url,
      headers: requestHeaders(req, a.target, a.cookie, false),
      agent: this.agent,
      maxHeaderSize: this.limits.maxHeaderBytes,
      setHost: false,
    });
    upstream.setTimeout(this.limits.idleMs, () => upstream.destroy(new Error(`no data for ${this.limits.idleMs} ms`)));
    upstream.on("response", (answer) => {
      answered = true;
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.rawHeaders, answer.headers, a.target));
      // A stream (SSE, chunked) shows its headers at once; a sized answer goes out with its first bytes.
      if (answer.headers["content-length"] === undefined) res.flushHeaders();
      answer.on("data", countShortLived);
      answer.pipe(res);
      answer.on("error", () => res.destroy());
    });
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      if (answered || res.destroyed) return void res.destroy();
      if (retry && upstream.reusedSocket && isIdempotentWithoutBody(req))
        return void this.forward(req, res, a, false).catch(() => res.destroy());
      if (err.code === "ECONNREFUSED") {
        this.addresses.delete(port);
        return sendPage(req, res, waitingPage(port));
      }
      sendPage(req, res, failedPage(port, err.code ?? err.message));
    });
    // The client went away (or was cut off): the app's request ends too.
    res.once("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    // A retry's request has been read already (it had no body).
    if (req.readableEnded) return void upstream.end();
    req.on("data", countShortLived);
    req.pipe(upstream);
  }

  /** An upgrade as a byte tunnel to the app: the handshake is the app's, the daemon only rewrites the request head. */
  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer, a: Admitted): Promise<void> {
    const port = a.host.port;
    const address = await this.address(port);
    if (client.destroyed) return;
    if (address === undefined) return refuseUpgrade(client, waitingPage(port));
    const app = connect({ host: address, port });
    this.tunnels.add(client);
    this.hold(client, a.grant);
    const end = (): void => {
      client.destroy();
      app.destroy();
    };
    client.once("close", () => {
      this.tunnels.delete(client);
      app.destroy();
    });
    app.once("close", () => client.destroy());
    app.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNREFUSED" && !client.destroyed) {
        this.addresses.delete(port);
        return refuseUpgrade(client, waitingPage(port));
      }
      end();
    });
    client.on("error", end);
    for (const s of [client, app]) {
      s.setNoDelay(true);
      s.setTimeout(this.limits.webSocketIdleMs, end);
    }
    const headers = requestHeaders(req, a.target, a.cookie, true);
    let text = `${req.method} ${a.url} HTTP/1.1\r\n`;
    for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
    app.write(`${text}\r\n`);
    if (head.length) app.write(head);
    app.on("data", countShortLived);
    client.on("data", countShortLived);
    app.pipe(client);
    client.pipe(app);
  }

  /** Where to reach a port: the last address that worked, else the listen table's. */
  private async address(port: number): Promise<string | undefined> {
    const known = this.addresses.get(port);
    if (known !== undefined) return known;
    let lookup = this.lookups.get(port);
    if (!lookup) {
      lookup = this.ports.address(port).finally(() => this.lookups.delete(port));
      this.lookups.set(port, lookup);
    }
    const found = await lookup;
    if (found !== undefined) this.addresses.set(port, found);
    return found;
  }

  /** Remembers which grant a client socket uses, so revoking or expiry closes it. */
  private hold(socket: Duplex, grant: Grant): void {
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

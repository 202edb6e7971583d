import type { IncomingMessage, ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { TokenStore } from "../tokens/store.js";
import type { ChromiumBrowser } from "./chromium.js";

/** The path every CDP URL starts with: `/cdp/<token>/devtools/browser/<id>` (and `/cdp/<token>/json/version`). */
export const CDP_PREFIX = "/cdp";
/** Relayed DevTools connections at most; one more is refused (503). */
const MAX_RELAYS = 32;
/** Headers of the client's upgrade that reach Chromium (its Host and Origin are the relay's own: Chromium refuses others). */
const FORWARDED = [
  "upgrade",
  "connection",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-protocol",
];

interface CdpRequest {
  token: string;
  /** What follows the token: `/devtools/…` or `/json/version`. */
  rest: string;
}

function parse(url: string | undefined): CdpRequest | undefined {
  const m = /^\/cdp\/([^/?#]+)(\/[^?#]*)?(?:\?.*)?$/.exec(url ?? "");
  return m ? { token: decodeURIComponent(m[1]!), rest: m[2] ?? "/" } : undefined;
}

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code, message } });
  const reason = { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 503: "Service Unavailable" }[status] ?? "Error";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The DevTools relay behind browser.open's cdpUrl: a WebSocket upgrade on the daemon's port,
 * authorised by the `cdp` token in its path (a CDP client cannot send headers of its own), from
 * no browser Origin but an allowed one, is replayed to Chromium's loopback endpoint and the two
 * sockets are piped (backpressure is TCP's). A connection lives as long as its token: revoking
 * or expiry closes it. `/cdp/<token>/json/version` answers as Chromium does, with the relay's URL,
 * for clients that start from an http:// URL.
 */
export class CdpRelay {
  private readonly open = new Map<Duplex, string>();

  constructor(
    private readonly tokens: TokenStore,
    private readonly browser: ChromiumBrowser,
    private readonly allowedOrigins: readonly string[],
    private readonly log: Logger,
  ) {
    tokens.onRevoke((id) => {
      for (const [socket, token] of this.open) if (token === id) socket.destroy();
    });
  }

  /** Why this request may not use the relay (status, code, message), or its token id and expiry. */
  private authorise(
    req: IncomingMessage,
    cdp: CdpRequest,
  ): { status: number; code: string; message: string } | { id: string; expiresAt?: number } {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allowedOrigins.includes(origin))
      return { status: 403, code: "forbidden", message: `origin ${origin} is not allowed (allowedOrigins)` };
    const check = this.tokens.check(cdp.token, Date.now(), "cdp");
    if (!check.ok)
      return {
        status: 401,
        code: "unauthorized",
        message: check.reason === "expired" ? "this CDP URL has expired; call browser.open again" : "this CDP URL's token is not valid",
      };
    return { id: check.id, ...(check.expiresAt !== undefined ? { expiresAt: check.expiresAt } : {}) };
  }

  /** The upgrade route: `/cdp/<token>/devtools/…`. */
  readonly upgradeRoute = {
    prefix: CDP_PREFIX,
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
      void this.upgrade(req, socket, head).catch((err: unknown) => {
        this.log.error({ err }, "cdp relay failed");
        socket.destroy();
      });
    },
  };

  /** The HTTP route: `/cdp/<token>/json/version`. */
  readonly httpRoute = {
    prefix: CDP_PREFIX,
    handle: async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const cdp = parse(req.url) ?? { token: "", rest: "/" };
      const reply = (status: number, body: unknown): void => {
        res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
        res.end(JSON.stringify(body));
      };
      const auth = this.authorise(req, cdp);
      if ("status" in auth) return reply(auth.status, { ok: false, error: { code: auth.code, message: auth.message } });
      const devtools = await this.browser.current();
      if (!devtools)
        return reply(503, { ok: false, error: { code: "unavailable", message: "Chromium is not running; call browser.open" } });
      if (cdp.rest.replace(/\/$/, "") !== "/json/version")
        return reply(404, {
          ok: false,
          error: { code: "not_found", message: "the relay answers /json/version and WebSocket upgrades to /devtools/…" },
        });
      const version = (await (
        await fetch(`http://127.0.0.1:${devtools.port}/json/version`, { signal: AbortSignal.timeout(10_000) })
      ).json()) as Record<string, unknown>;
      const host = req.headers.host ?? "127.0.0.1";
      reply(200, { ...version, webSocketDebuggerUrl: `ws://${host}${CDP_PREFIX}/${encodeURIComponent(cdp.token)}${devtools.browserPath}` });
    },
  };

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const cdp = parse(req.url) ?? { token: "", rest: "/" };
    const auth = this.authorise(req, cdp);
    if ("status" in auth) {
      this.log.info({ status: auth.status, origin: req.headers.origin, remote: req.socket.remoteAddress }, "cdp upgrade refused");
      return refuse(socket, auth.status, auth.code, auth.message);
    }
    if (!cdp.rest.startsWith("/devtools/"))
      return refuse(socket, 404, "not_found", "a CDP WebSocket URL is /cdp/<token>/devtools/…; browser.open gives one");
    if (this.open.size >= MAX_RELAYS)
      return refuse(socket, 503, "limit_exceeded", `${MAX_RELAYS} CDP connections are open, the most the daemon relays`);
    const devtools = await this.browser.current();
    if (!devtools) return refuse(socket, 503, "unavailable", "Chromium is not running; call browser.open");
    const upstream: Socket = connect(devtools.port, "127.0.0.1");
    const lines = [`GET ${cdp.rest} HTTP/1.1`, `Host: 127.0.0.1:${devtools.port}`];
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === "string") lines.push(`${name}: ${value}`);
    }
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) upstream.write(head);
    this.open.set(socket, auth.id);
    const end = (): void => {
      this.open.delete(socket);
      clearTimeout(expiry);
      socket.destroy();
      upstream.destroy();
    };
    const expiry =
      auth.expiresAt === undefined ? undefined : setTimeout(end, Math.min(2 ** 31 - 1, Math.max(0, auth.expiresAt - Date.now())));
    expiry?.unref();
    socket.on("close", end);
    upstream.on("close", end);
    upstream.on("error", end);
    socket.on("error", end);
    socket.pipe(upstream);
    upstream.pipe(socket);
  }

  /** Closes every relayed connection (daemon shutdown). */
  close(): void {
    for (const socket of this.open.keys()) socket.destroy();
  }
}

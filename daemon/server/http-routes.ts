import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { frontDoor } from "./front-door.js";
import type { UnprovenSockets } from "./unproven-sockets.js";

/**
 * A plain-HTTP endpoint served on the daemon's port beside the WebSocket (the MCP endpoint, the
 * console's pages). Each route owns its authentication: nothing here checks a token.
 */
export interface HttpRoute {
  /** Matches a request path equal to `prefix` or below it (`/mcp` matches `/mcp` and `/mcp/x`). */
  prefix: string;
  /**
   * `admit` takes the request's socket out of the budget of unproven sockets until the response
   * ends: a route calls it once the request is authorised and complete (a long-lived answer, such
   * as an MCP event stream, must call it, or the budget may close it under load).
   */
  handle(req: IncomingMessage, res: ServerResponse, admit: () => void): void | Promise<void>;
}

/** Answers with the daemon's error body `{ok: false, error: {code, message}}`. */
export function sendJson(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ ok: false, error: { code, message } }));
}

/**
 * A WebSocket upgrade served by something other than the protocol's connection (the CDP and VNC
 * relays). Like an HttpRoute it owns its authentication.
 */
export interface UpgradeRoute {
  prefix: string;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** The first route whose prefix matches the request's path. */
export function routeFor<R extends { prefix: string }>(routes: readonly R[], url: string | undefined): R | undefined {
  const path = (url ?? "/").split("?")[0]!;
  return routes.find((r) => matches(r.prefix, path));
}

function matches(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`);
}

/**
 * The daemon's HTTP request handler: the first route whose prefix matches serves the request; a
 * route that throws fails that one request with 500, never the daemon. `GET /` answers how to
 * connect (front-door.ts); anything else answers 426, as the WebSocket-only daemon always has.
 */
export function routeHttp(
  routes: readonly HttpRoute[],
  log: Logger,
  unproven?: UnprovenSockets,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const admit = (): void => {
      if (!unproven) return;
      unproven.prove(req.socket);
      // Idle between keep-alive requests, the socket has to prove itself again.
      res.once("close", () => unproven.add(req.socket));
    };
    const path = (req.url ?? "/").split("?")[0]!;
    const route = routes.find((r) => matches(r.prefix, path));
    if (!route) {
      if (frontDoor(req, res)) return;
      return sendJson(res, 426, "invalid_request", "this endpoint speaks WebSocket only; GET / says how to connect");
    }
    const fail = (err: unknown): void => {
      log.error({ err, path }, "http route failed");
      sendJson(res, 500, "internal", `internal error: ${(err as Error)?.message ?? String(err)}`);
    };
    try {
      const done = route.handle(req, res, admit);
      if (done) done.catch(fail);
    } catch (err) {
      fail(err);
    }
  };
}

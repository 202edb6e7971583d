import { type HttpRoute, sendJson } from "./server/http-routes.js";
import { checkUpgrade } from "./server/upgrade-guard.js";
import type { TokenStore } from "./tokens/store.js";
import type { McpHttpEndpoint } from "../mcp/http.js";

export interface McpRouteOptions {
  tokens: TokenStore;
  allowedOrigins: readonly string[];
  /** The largest request body (maxPayloadBytes). */
  maxBodyBytes: number;
  /** The daemon's WebSocket URL, known once it listens. */
  url: () => string;
}

/** MCP sessions at once (each holds a client connection, counted in maxConnections too). */
const MAX_SESSIONS = 16;
/** A session with no request for this long is closed with its connection. */
const SESSION_IDLE_MS = 10 * 60_000;

/**
 * The MCP code, loaded in steps of one event-loop turn each: evaluated at once, Node's own undici
 * (the Web Request/Response the SDK's HTTP transport uses), zod with the SDK's schemas and the
 * rest held the loop 120–160 ms of CPU on a loaded machine in one turn of the first request.
 */
const LOAD_STEPS: ReadonlyArray<() => unknown> = [
  () => globalThis.Response,
  () => import("@modelcontextprotocol/sdk/types.js"),
  () => import("@modelcontextprotocol/sdk/server/index.js"),
];

async function loadEndpoint(): Promise<typeof import("../mcp/http.js")> {
  for (const step of LOAD_STEPS) {
    await step();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return import("../mcp/http.js");
}

/** The /mcp route and a way to end its sessions at shutdown. */
export interface McpRoute extends HttpRoute {
  close(): Promise<void>;
}

/**
 * MCP over Streamable HTTP on the daemon's port. Authenticated exactly like the WebSocket upgrade
 * (same token rule, same Origin rule, same 401/403 bodies). The SDK and mcp/ are loaded on the
 * first authorised request only, so a daemon nobody asks for MCP never pays for them.
 */
export function mcpRoute(options: McpRouteOptions): McpRoute {
  let endpoint: Promise<McpHttpEndpoint> | undefined;
  return {
    prefix: "/mcp",
    async handle(req, res, admit) {
      const verdict = checkUpgrade(req, options.tokens, options.allowedOrigins);
      if (!verdict.ok) return sendJson(res, verdict.status, verdict.code, verdict.message);
      endpoint ??= loadEndpoint()
        .then(
          (m) =>
            new m.McpHttpEndpoint({
              url: options.url(),
              maxSessions: MAX_SESSIONS,
              idleMs: SESSION_IDLE_MS,
              maxBodyBytes: options.maxBodyBytes,
            }),
        )
        .catch((err: unknown) => {
          endpoint = undefined; // the next request tries again
          throw err;
        });
      await (await endpoint).handle(req, res, { token: verdict.token, tokenId: verdict.tokenId, scope: verdict.scope, admit });
    },
    async close() {
      // Never throws: shutdown must go on to the server, the jobs and daemon.json.
      await endpoint?.then(
        (e) => e.close(),
        () => {},
      );
    },
  };
}

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { connect, HotlineError, type HotlineClient } from "../client/index.js";
import type { Scope } from "../protocol/define.js";
import { readBody } from "./body.js";
import { createMcpServer, type McpServerOptions } from "./server.js";
import { parseToolsets } from "./toolsets.js";

/** Who is calling, as the daemon's upgrade check found it. */
export interface Caller {
  token: string;
  tokenId: string;
  scope: Scope;
  /**
   * Called once the request has proved to belong to a session (its body read, the session known or
   * just initialized): until then its socket counts among the daemon's unproven requests.
   */
  admit(): void;
}

export interface HttpEndpointOptions {
  /** The daemon's own WebSocket URL: every session's tool calls go there with the caller's token. */
  url: string;
  /**
   * At most this many sessions at once (each holds one client connection to the daemon). At the
   * bound a new one ends the least recently used session of a lower scope, else of its own token,
   * else of its own scope; never one of a higher scope (an observe token cannot end manage's).
   */
  maxSessions: number;
  /** A session without a request for this long is closed. */
  idleMs: number;
  /** The largest request body (the daemon's maxPayloadBytes: a tool call becomes one request frame). */
  maxBodyBytes: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  client: HotlineClient;
  tokenId: string;
  scope: Scope;
  lastUsed: number;
}

const SCOPE_RANK: Record<Scope, number> = { observe: 0, manage: 1 };

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ ok: false, error: { code, message } }));
}

/** A JSON-RPC error without an id, as the SDK's transport answers one. */
function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/**
 * MCP over Streamable HTTP at /mcp. Authentication happened before (the daemon's upgrade rules);
 * here each session gets its own client connection to the daemon with the caller's token, bound
 * to that token, closed when the session ends, is idle too long, or the endpoint closes.
 */
export class McpHttpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: HttpEndpointOptions) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(60_000, options.idleMs));
    this.sweeper.unref();
  }

  /**
   * Serves one request. A POST's body is read (bounded) before anything is opened for it: a client
   * connection to the daemon is made only for a complete initialize request, so bodies that never
   * finish hold no connection slot.
   */
  async handle(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void> {
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const session = this.sessions.get(id);
      if (!session) return sendError(res, 404, "not_found", `no MCP session ${id} (it ended or expired): initialize a new one`);
      if (session.tokenId !== caller.tokenId) return sendError(res, 403, "forbidden", `MCP session ${id} belongs to another token`);
      const body = req.method === "POST" ? await this.body(req, res) : undefined;
      if (req.method === "POST" && body === undefined) return;
      caller.admit();
      session.lastUsed = Date.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST")
      return sendError(res, 400, "invalid_request", "send an MCP initialize request by POST first (no mcp-session-id header)");
    const body = await this.body(req, res);
    if (body === undefined) return;
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    if (!messages.some((m) => isInitializeRequest(m))) return sendRpcError(res, 400, -32000, "Bad Request: Server not initialized");
    const victim = this.victimFor(caller);
    if (victim === null)
      return sendError(
        res,
        503,
        "limit_exceeded",
        `${this.sessions.size} MCP sessions are open, all of tokens with a scope above ${caller.scope}; try again when one ends`,
      );
    await this.open(req, res, caller, body);
  }

  /** The request's JSON body, or undefined when it was answered instead (too large, not JSON, the client went). */
  private async body(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const read = await readBody(req, this.options.maxBodyBytes);
    if (read.ok) {
      try {
        return JSON.parse(read.text) as unknown;
      } catch {
        return void sendRpcError(res, 400, -32700, "Parse error: Invalid JSON");
      }
    }
    if (read.reason === "too_large")
      sendRpcError(res, 413, -32000, `Payload too large: the request body exceeds ${this.options.maxBodyBytes} bytes (maxPayloadBytes)`);
    else req.socket.destroy();
    return undefined;
  }

  /**
   * Which session a new one of this caller ends: undefined while there is room, the least recently
   * used of a lower scope's, else of its own token's, else of its own scope's; null when every session
   * belongs to a higher scope (the new one is refused).
   */
  private victimFor(caller: Caller): Session | undefined | null {
    if (this.sessions.size < this.options.maxSessions) return undefined;
    const all = [...this.sessions.values()];
    const rank = SCOPE_RANK[caller.scope];
    const groups = [
      all.filter((s) => SCOPE_RANK[s.scope] < rank),
      all.filter((s) => s.tokenId === caller.tokenId),
      all.filter((s) => SCOPE_RANK[s.scope] === rank),
    ];
    const group = groups.find((g) => g.length > 0);
    return group ? leastRecentlyUsed(group) : null;
  }

  /** Ends every session and its client connection (the daemon is shutting down). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.end(s)));
  }

  private async open(req: IncomingMessage, res: ServerResponse, caller: Caller, body: unknown): Promise<void> {
    let choice: McpServerOptions;
    try {
      choice = sessionChoice(req);
    } catch (err) {
      return sendError(res, 400, "invalid_request", (err as Error).message);
    }
    let client: HotlineClient;
    try {
      client = await connect({ url: this.options.url, token: caller.token });
    } catch (err) {
      // The daemon refused the session's connection (connection limit, token revoked meanwhile): say so, as the WebSocket would.
      if (!(err instanceof HotlineError)) throw err;
      const status = err.code === "unauthorized" ? 401 : err.code === "forbidden" ? 403 : 503;
      return sendError(res, status, err.code, `cannot open an MCP session: ${err.message}`);
    }
    let server: Server;
    try {
      server = await createMcpServer(client, choice);
    } catch (err) {
      await client.close();
      throw err;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (sessionId) => {
        // Many MCP clients never DELETE their session: at the bound, one ends (victimFor), once this
        // request has proved to be an initialize (a stray POST must not evict anyone). Chosen again
        // here: sessions may have come or gone while this one connected.
        const victim = this.victimFor(caller);
        if (victim) void this.end(victim);
        this.sessions.set(sessionId, { transport, server, client, tokenId: caller.tokenId, scope: caller.scope, lastUsed: Date.now() });
        caller.admit();
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      void client.close();
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    // Not an initialize request (no session was made): nothing may stay open for it.
    if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await server.close();
  }

  private async end(session: Session): Promise<void> {
    if (session.transport.sessionId) this.sessions.delete(session.transport.sessionId);
    await session.server.close().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) if (now - session.lastUsed > this.options.idleMs) void this.end(session);
  }
}

/**
 * What a new session lists, from its initialize request: the toolsets in the `toolsets` query
 * parameter or the `X-MCP-Toolsets` header (`core,web`, `all`; the defaults otherwise), and each
 * tool's outputSchema with `outputSchemas=1` (or the header `X-MCP-Output-Schemas: 1`).
 */
function sessionChoice(req: IncomingMessage): McpServerOptions {
  const query = new URL(req.url ?? "/", "http://mcp").searchParams;
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(",") : value;
  };
  const toolsets = parseToolsets(query.get("toolsets") ?? header("x-mcp-toolsets"));
  const outputSchemas = ["1", "true"].includes(query.get("outputSchemas") ?? header("x-mcp-output-schemas") ?? "");
  return { ...(toolsets ? { toolsets } : {}), outputSchemas };
}

function leastRecentlyUsed(sessions: Session[]): Session | undefined {
  let oldest: Session | undefined;
  for (const session of sessions) if (!oldest || session.lastUsed < oldest.lastUsed) oldest = session;
  return oldest;
}

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { connect, HotlineError, type HotlineClient } from "../client/index.js";
import { createMcpServer } from "./server.js";

/** Who is calling, as the daemon's upgrade check found it. */
export interface Caller {
  token: string;
  tokenId: string;
}

export interface HttpEndpointOptions {
  /** The daemon's own WebSocket URL: every session's tool calls go there with the caller's token. */
  url: string;
  /** At most this many sessions at once (each holds one client connection to the daemon); a new one ends the least recently used. */
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
  lastUsed: number;
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ ok: false, error: { code, message } }));
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

  async handle(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void> {
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const session = this.sessions.get(id);
      if (!session) return sendError(res, 404, "not_found", `no MCP session ${id} (it ended or expired): initialize a new one`);
      if (session.tokenId !== caller.tokenId) return sendError(res, 403, "forbidden", `MCP session ${id} belongs to another token`);
      session.lastUsed = Date.now();
      return session.transport.handleRequest(req, res);
    }
    if (req.method !== "POST")
      return sendError(res, 400, "invalid_request", "send an MCP initialize request by POST first (no mcp-session-id header)");
    await this.open(req, res, caller);
  }

  /** Ends every session and its client connection (the daemon is shutting down). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.end(s)));
  }

  private async open(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void> {
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
      server = await createMcpServer(client);
    } catch (err) {
      await client.close();
      throw err;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (sessionId) => {
        // Many MCP clients never DELETE their session: at the bound, the least recently used one ends,
        // once this request has proved to be an initialize (a stray POST must not evict anyone).
        if (this.sessions.size >= this.options.maxSessions) void this.end(this.leastRecentlyUsed()!);
        this.sessions.set(sessionId, { transport, server, client, tokenId: caller.tokenId, lastUsed: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      void client.close();
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialize request (no session was made): nothing may stay open for it.
    if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await server.close();
  }

  private async end(session: Session): Promise<void> {
    if (session.transport.sessionId) this.sessions.delete(session.transport.sessionId);
    await session.server.close().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

  private leastRecentlyUsed(): Session | undefined {
    let oldest: Session | undefined;
    for (const session of this.sessions.values()) if (!oldest || session.lastUsed < oldest.lastUsed) oldest = session;
    return oldest;
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) if (now - session.lastUsed > this.options.idleMs) void this.end(session);
  }
}

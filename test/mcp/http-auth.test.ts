import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInterface } from "node:readline";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { mcpClient, mcpUrl, textOf } from "./mcp-client.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

/** One raw POST to /mcp, as a remote agent's HTTP client would send it. */
async function post(daemon: TestDaemon, headers: Record<string, string>): Promise<{ status: number; body: unknown; session?: string }> {
  const res = await fetch(mcpUrl(daemon), {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(INITIALIZE),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // an SSE answer: the status is what matters
  }
  const session = res.headers.get("mcp-session-id");
  return { status: res.status, body, ...(session ? { session } : {}) };
}

type LogRecord = { msg?: string; conn?: string };

/** Resolves with the daemon's next log record that matches (the daemon runs with --log-level debug). */
function nextLog(daemon: TestDaemon, match: (r: LogRecord) => boolean): Promise<LogRecord> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: daemon.proc.stderr! });
    lines.on("line", (line) => {
      let record: LogRecord;
      try {
        record = JSON.parse(line) as LogRecord;
      } catch {
        return;
      }
      if (!match(record)) return;
      lines.close();
      resolve(record);
    });
  });
}

describe("MCP over HTTP: the WebSocket's authentication rules", () => {
  let daemon: TestDaemon;
  let ws: TestClient;
  beforeAll(async () => {
    daemon = await TestDaemon.start({
      args: ["--allow-origin", "https://console.example", "--log-level", "debug", "--max-payload", "65536"],
    });
    ws = await daemon.client();
  });
  afterAll(async () => {
    await ws?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("answers 401 with the upgrade's JSON error without a token, or with a wrong one", async () => {
    expect(await post(daemon, {})).toEqual({
      status: 401,
      body: { ok: false, error: { code: "unauthorized", message: expect.stringContaining("no token") } },
    });
    expect(await post(daemon, { Authorization: "Bearer not-the-token" })).toEqual({
      status: 401,
      body: { ok: false, error: { code: "unauthorized", message: "wrong token" } },
    });
  });

  it("answers 403 to a foreign Origin, even with the right token; an allowed Origin gets in", async () => {
    const foreign = await post(daemon, { Authorization: `Bearer ${daemon.token}`, Origin: "https://evil.example" });
    expect({ status: foreign.status, body: foreign.body }).toEqual({
      status: 403,
      body: { ok: false, error: { code: "forbidden", message: expect.stringContaining("https://evil.example") } },
    });
    const allowed = await post(daemon, { Authorization: `Bearer ${daemon.token}`, Origin: "https://console.example" });
    expect(allowed.status).toBe(200);
  });

  it("an observe token lists only observe tools and gets a clear error from shell", async () => {
    const { token } = (await ws.ok("tokens.create", { scope: "observe" })) as { token: string };
    const mcp = await mcpClient(daemon, "http", token);
    try {
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      expect(names).toContain("jobs_output");
      expect(names).not.toContain("shell");
      expect(names).not.toContain("tokens_create");
      const result = await mcp.callTool({ name: "shell", arguments: { command: "echo should not run" } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^forbidden: .*manage/);
    } finally {
      await mcp.close();
    }
  });

  it("a session answers only the token that opened it", async () => {
    const mcp = await mcpClient(daemon, "http");
    try {
      const { token } = (await ws.ok("tokens.create", { scope: "manage" })) as { token: string };
      const sessionId = (mcp.transport as { sessionId?: string }).sessionId!;
      const res = await fetch(mcpUrl(daemon), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          Authorization: `Bearer ${token}`,
          "mcp-session-id": sessionId,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ ok: false, error: { code: "forbidden", message: expect.stringContaining("another token") } });
    } finally {
      await mcp.close();
    }
  });

  it("a session holds one daemon connection, closed when the session ends", async () => {
    const opened = nextLog(daemon, (r) => r.msg === "connection opened");
    const mcp = await mcpClient(daemon, "http");
    const { conn } = await opened;
    const closed = nextLog(daemon, (r) => r.msg === "connection closed" && r.conn === conn);
    await (mcp.transport as unknown as { terminateSession(): Promise<void> }).terminateSession();
    await closed;
    await mcp.close();
  });

  it("keeps at most 16 sessions: a new one ends the least recently used, a POST that is no initialize ends none", async () => {
    const auth = { Authorization: `Bearer ${daemon.token}` };
    const listTools = (session: string | undefined, id: number) =>
      fetch(mcpUrl(daemon), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          ...auth,
          ...(session ? { "mcp-session-id": session } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" }),
      });
    const first = await post(daemon, auth);
    const second = await post(daemon, auth);
    for (let i = 0; i < 14; i++) expect((await post(daemon, auth)).status).toBe(200);
    // 16 sessions: a stray request without a session (not an initialize) must not end the oldest.
    expect((await listTools(undefined, 2)).status).toBeGreaterThanOrEqual(400);
    expect((await listTools(first.session, 3)).status).toBe(200); // still there; now the most recently used
    expect((await post(daemon, auth)).status).toBe(200); // the 17th ends the least recently used: the second
    const res = await listTools(second.session, 4);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ ok: false, error: { code: "not_found", message: expect.stringContaining("initialize a new one") } });
  });

  it("refuses a request body larger than the daemon's maxPayloadBytes with 413", async () => {
    const mcp = await mcpClient(daemon, "http");
    try {
      const sessionId = (mcp.transport as { sessionId?: string }).sessionId!;
      const call = {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "shell", arguments: { command: `echo ${"x".repeat(70_000)}` } },
      };
      const res = await fetch(mcpUrl(daemon), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          Authorization: `Bearer ${daemon.token}`,
          "mcp-session-id": sessionId,
        },
        body: JSON.stringify(call),
      });
      expect(res.status).toBe(413);
    } finally {
      await mcp.close();
    }
  });
});

describe("MCP sessions: a lesser token never ends a greater one's", () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await TestDaemon.start();
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
  });

  const listTools = (token: string, session: string) =>
    fetch(mcpUrl(daemon), {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
        "mcp-session-id": session,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    });

  it("16 sessions of an observe token end its own, never a manage token's; at a bound of manage sessions an observer is refused", async () => {
    const manage = await post(daemon, { Authorization: `Bearer ${daemon.token}` });
    expect(manage.status).toBe(200);
    const ws = await daemon.client();
    const { token: observe } = await ws.ok("tokens.create", { scope: "observe", ttlMs: 600_000 });
    await ws.close();
    const observed: string[] = [];
    for (let i = 0; i < 16; i++) {
      const opened = await post(daemon, { Authorization: `Bearer ${observe}` });
      expect(opened.status).toBe(200);
      observed.push(opened.session!);
    }
    expect((await listTools(daemon.token, manage.session!)).status).toBe(200); // before: 404, ended by the observer
    expect((await listTools(observe, observed[0]!)).status).toBe(404); // the observer's own oldest went
    // A manage token makes room by ending an observer's session.
    const manageSessions = [manage.session!];
    for (let i = 0; i < 15; i++) manageSessions.push((await post(daemon, { Authorization: `Bearer ${daemon.token}` })).session!);
    for (const session of manageSessions) expect((await listTools(daemon.token, session)).status).toBe(200);
    // Now every session is manage's: an observer is refused rather than ending one.
    const refused = await post(daemon, { Authorization: `Bearer ${observe}` });
    expect(refused).toMatchObject({ status: 503, body: { ok: false, error: { code: "limit_exceeded" } } });
    for (const session of manageSessions) expect((await listTools(daemon.token, session)).status).toBe(200);
  });
});

describe("MCP over HTTP at shutdown", () => {
  it("the daemon stops cleanly (exit 0) while an MCP session and its event stream are open", async () => {
    const daemon = await TestDaemon.start();
    try {
      const mcp = await mcpClient(daemon, "http");
      expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
      expect(await daemon.stop()).toBe(0);
      await mcp.close();
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

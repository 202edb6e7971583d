import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { mcpClient, mcpUrl, textOf } from "./mcp-client.js";

const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } };

/** One raw POST to /mcp, as a remote agent's HTTP client would send it. */
async function post(daemon: TestDaemon, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
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
  return { status: res.status, body };
}

describe("MCP over HTTP: the WebSocket's authentication rules", () => {
  let daemon: TestDaemon;
  let ws: TestClient;
  beforeAll(async () => {
    daemon = await TestDaemon.start({ args: ["--allow-origin", "https://console.example"] });
    ws = await daemon.client();
  });
  afterAll(async () => {
    await ws?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("answers 401 with the upgrade's JSON error without a token, or with a wrong one", async () => {
    expect(await post(daemon, {})).toEqual({ status: 401, body: { ok: false, error: { code: "unauthorized", message: expect.stringContaining("no token") } } });
    expect(await post(daemon, { Authorization: "Bearer not-the-token" })).toEqual({ status: 401, body: { ok: false, error: { code: "unauthorized", message: "wrong token" } } });
  });

  it("answers 403 to a foreign Origin, even with the right token; an allowed Origin gets in", async () => {
    const foreign = await post(daemon, { Authorization: `Bearer ${daemon.token}`, Origin: "https://evil.example" });
    expect(foreign).toEqual({ status: 403, body: { ok: false, error: { code: "forbidden", message: expect.stringContaining("https://evil.example") } } });
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
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}`, "mcp-session-id": sessionId },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ ok: false, error: { code: "forbidden", message: expect.stringContaining("another token") } });
    } finally {
      await mcp.close();
    }
  });
});

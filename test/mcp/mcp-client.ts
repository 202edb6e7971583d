import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI_MAIN, type TestDaemon } from "../helpers/daemon.js";

export type TransportKind = "stdio" | "http";

/** The daemon's /mcp URL (its WebSocket URL with http:). */
export function mcpUrl(daemon: TestDaemon): URL {
  return new URL(`${daemon.url.replace(/^ws:/, "http:")}/mcp`);
}

/**
 * An official SDK Client connected to the daemon's MCP server: `hotline mcp` spawned on stdio with
 * the daemon's directories, or Streamable HTTP at /mcp with a token.
 */
export async function mcpClient(daemon: TestDaemon, kind: TransportKind, token = daemon.token): Promise<Client> {
  const client = new Client({ name: "hotline-test", version: "0" });
  if (kind === "stdio") {
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [CLI_MAIN, "mcp"], env: daemon.cliEnv, stderr: "inherit" }),
    );
  } else {
    await client.connect(
      new StreamableHTTPClientTransport(mcpUrl(daemon), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
  }
  return client;
}

/** The text of a tool result's content, joined. */
export function textOf(result: { content?: unknown } | Record<string, unknown>): string {
  return ((result.content as { type: string; text?: string }[]) ?? []).map((c) => c.text ?? "").join("\n");
}

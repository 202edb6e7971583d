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
 * What the session lists: `toolsets` as `--toolsets` / `?toolsets=` take them (undefined: the
 * server's defaults), and `outputSchemas` (the SDK client then validates every structuredContent).
 */
export interface SessionChoice {
  toolsets?: string;
  outputSchemas?: boolean;
}

/** Most tests call every tool and check each result against its outputSchema, as before toolsets. */
const EVERYTHING: SessionChoice = { toolsets: "all", outputSchemas: true };

/**
 * An official SDK Client connected to the daemon's MCP server: `hotline mcp` spawned on stdio with
 * the daemon's directories, or Streamable HTTP at /mcp with a token.
 */
export async function mcpClient(daemon: TestDaemon, kind: TransportKind, token = daemon.token, choice = EVERYTHING): Promise<Client> {
  const client = new Client({ name: "hotline-test", version: "0" });
  if (kind === "stdio") {
    const args = [
      CLI_MAIN,
      "mcp",
      ...(choice.toolsets ? ["--toolsets", choice.toolsets] : []),
      ...(choice.outputSchemas ? ["--output-schemas"] : []),
    ];
    await client.connect(new StdioClientTransport({ command: process.execPath, args, env: daemon.cliEnv, stderr: "inherit" }));
  } else {
    const url = mcpUrl(daemon);
    if (choice.toolsets) url.searchParams.set("toolsets", choice.toolsets);
    if (choice.outputSchemas) url.searchParams.set("outputSchemas", "1");
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  }
  return client;
}

/** The text of a tool result's content, joined. */
export function textOf(result: { content?: unknown } | Record<string, unknown>): string {
  return ((result.content as { type: string; text?: string }[]) ?? []).map((c) => c.text ?? "").join("\n");
}

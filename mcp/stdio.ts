import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { connect, type ConnectOptions } from "../client/index.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

/**
 * `hotline mcp`: an MCP server on stdin/stdout for an agent on this machine, over one client
 * connection to the daemon (found like the CLI finds it). Resolves when the agent closes stdin.
 */
export async function runStdioServer(options: ConnectOptions, choice: McpServerOptions = {}): Promise<void> {
  const client = await connect(options);
  const server = await createMcpServer(client, choice);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    // The SDK's stdio transport does not notice the end of stdin by itself.
    process.stdin.once("end", () => void server.close());
  });
  await server.connect(transport);
  await closed;
  await client.close();
}

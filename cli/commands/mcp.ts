import { parseArgs } from "node:util";

/**
 * `hotline mcp`: an MCP server on stdio for a coding agent on this machine. It connects to the
 * daemon like any program (hotline/client), so it needs no connection of the CLI's own; the MCP
 * SDK is loaded only here.
 */
export async function runMcp(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { "state-dir": { type: "string" }, "config-dir": { type: "string" }, url: { type: "string" }, "token-file": { type: "string" } },
    strict: true,
  });
  const { runStdioServer } = await import("../../mcp/stdio.js");
  await runStdioServer({
    ...(values["state-dir"] ? { stateDir: values["state-dir"] } : {}),
    ...(values["config-dir"] ? { configDir: values["config-dir"] } : {}),
    ...(values.url ? { url: values.url, tokenFile: values["token-file"] } : {}),
  });
  return 0;
}

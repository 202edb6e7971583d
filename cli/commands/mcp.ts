import { parseArgs } from "node:util";
import { HotlineError } from "../../client/index.js";
import { EXIT } from "../exit-codes.js";

const USAGE = "usage: hotline mcp [--state-dir D] [--config-dir D] [--url U --token-file F]   (an MCP server on stdio; README: MCP)";

/**
 * `hotline mcp`: an MCP server on stdio for a coding agent on this machine. It connects to the
 * daemon like any program (hotline/client), so it needs no connection of the CLI's own; the MCP
 * SDK is loaded only here. Exit codes are the CLI's: 2 bad flags, 69 no daemon.
 */
export async function runMcp(argv: string[]): Promise<number> {
  let values: { "state-dir"?: string; "config-dir"?: string; url?: string; "token-file"?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        "state-dir": { type: "string" },
        "config-dir": { type: "string" },
        url: { type: "string" },
        "token-file": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`hotline mcp: ${(err as Error).message}\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { runStdioServer } = await import("../../mcp/stdio.js");
  try {
    await runStdioServer({
      ...(values["state-dir"] ? { stateDir: values["state-dir"] } : {}),
      ...(values["config-dir"] ? { configDir: values["config-dir"] } : {}),
      ...(values.url ? { url: values.url, tokenFile: values["token-file"] } : {}),
    });
  } catch (err) {
    if (!(err instanceof HotlineError)) throw err;
    process.stderr.write(`hotline mcp: ${err.message}\n`);
    return err.code === "unavailable" ? EXIT.daemonUnavailable : EXIT.requestFailed;
  }
  return 0;
}

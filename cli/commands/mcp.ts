import { parseArgs } from "node:util";
import { HotlineError } from "../../client/index.js";
import { parseToolsets, type ToolsetName } from "../../mcp/toolsets.js";
import { EXIT } from "../exit-codes.js";

const USAGE =
  "usage: hotline mcp [--toolsets core,web,…|all] [--output-schemas] [--state-dir D] [--config-dir D] [--url U --token-file F]\n" +
  "  an MCP server on stdio (README: MCP). --toolsets: the tools listed at first (default: core,sessions; the toolsets tool lists and enables the others);\n" +
  "  --output-schemas: each tool with its outputSchema";

/**
 * `hotline mcp`: an MCP server on stdio for a coding agent on this machine. It connects to the
 * daemon like any program (hotline/client), so it needs no connection of the CLI's own; the MCP
 * SDK is loaded only here. Exit codes are the CLI's: 2 bad flags, 69 no daemon.
 */
export async function runMcp(argv: string[]): Promise<number> {
  let values: {
    "state-dir"?: string;
    "config-dir"?: string;
    url?: string;
    "token-file"?: string;
    toolsets?: string;
    "output-schemas"?: boolean;
    help?: boolean;
  };
  let toolsets: ToolsetName[] | undefined;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        "state-dir": { type: "string" },
        "config-dir": { type: "string" },
        url: { type: "string" },
        "token-file": { type: "string" },
        toolsets: { type: "string" },
        "output-schemas": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
    toolsets = parseToolsets(values.toolsets);
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
    await runStdioServer(
      {
        ...(values["state-dir"] ? { stateDir: values["state-dir"] } : {}),
        ...(values["config-dir"] ? { configDir: values["config-dir"] } : {}),
        ...(values.url ? { url: values.url, tokenFile: values["token-file"] } : {}),
      },
      { ...(toolsets ? { toolsets } : {}), outputSchemas: values["output-schemas"] === true },
    );
  } catch (err) {
    if (!(err instanceof HotlineError)) throw err;
    process.stderr.write(`hotline mcp: ${err.message}\n`);
    return err.code === "unavailable" ? EXIT.daemonUnavailable : EXIT.requestFailed;
  }
  return 0;
}

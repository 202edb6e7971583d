import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HotlineError } from "../client/index.js";
import { ALL_TOOLSETS, TOOLSETS, type ToolsetName } from "./toolsets.js";
import type { ToolDescription } from "./tools.js";

/** The tool that lists the toolsets and changes which are listed (always listed itself). */
export const TOOLSETS_TOOL = "toolsets";

const NAMES = { type: "array", items: { type: "string", enum: ALL_TOOLSETS }, uniqueItems: true } as const;

/** Its entry in tools/list: every toolset named with what it holds, so an agent can choose without a call. */
export function toolsetsTool(): ToolDescription {
  const sets = ALL_TOOLSETS.map((name) => `${name} — ${TOOLSETS[name].about}`).join("; ");
  return {
    name: TOOLSETS_TOOL,
    description:
      "Lists this server's toolsets (groups of tools) and enables or disables them for this MCP session: " +
      '`{"enable": ["web", "desktop"]}`. After a change the server sends notifications/tools/list_changed and the client lists the tools again. ' +
      `Toolsets: ${sets}.\n\nReturns {toolsets: [{name, about, listed, tools}]}.`,
    inputSchema: { type: "object", properties: { enable: NAMES, disable: NAMES }, additionalProperties: false },
    annotations: { title: TOOLSETS_TOOL, readOnlyHint: true },
  };
}

/** One session's listed toolsets; `change` answers the tool call and says whether the list changed. */
export class SessionToolsets {
  private readonly listed: Set<ToolsetName>;

  constructor(
    initial: readonly ToolsetName[],
    /** The tools of the session's scope in every toolset, by toolset (for the answer). */
    private readonly toolsOf: () => Promise<Map<ToolsetName, string[]>>,
  ) {
    this.listed = new Set(initial);
  }

  get names(): ToolsetName[] {
    return ALL_TOOLSETS.filter((n) => this.listed.has(n));
  }

  async call(args: { enable?: unknown; disable?: unknown }): Promise<{ result: CallToolResult; changed: boolean }> {
    const before = this.names.join(",");
    for (const [key, add] of [
      ["enable", true],
      ["disable", false],
    ] as const) {
      const value = args[key];
      if (value === undefined) continue;
      const names = Array.isArray(value) ? value : [value];
      const unknown = names.find((n) => typeof n !== "string" || !(n in TOOLSETS));
      if (unknown !== undefined)
        throw new HotlineError(
          "invalid_request",
          `${key}: no toolset ${JSON.stringify(unknown)}; the toolsets are ${ALL_TOOLSETS.join(", ")}`,
          {
            path: `/${key}`,
          },
        );
      for (const n of names as ToolsetName[]) add ? this.listed.add(n) : this.listed.delete(n);
    }
    const tools = await this.toolsOf();
    const toolsets = ALL_TOOLSETS.filter((name) => (tools.get(name) ?? []).length > 0).map((name) => ({
      name,
      about: TOOLSETS[name].about,
      listed: this.listed.has(name),
      tools: tools.get(name) ?? [],
    }));
    const lines = toolsets.map((t) => `${t.name} (${t.listed ? "listed" : "not listed"}): ${t.about}. Tools: ${t.tools.join(", ")}`);
    const changed = this.names.join(",") !== before;
    const note = changed ? "The tool list changed: the client lists the tools again." : "The tool list is unchanged.";
    return {
      result: { content: [{ type: "text", text: `${note}\n${lines.join("\n")}` }], structuredContent: { toolsets } },
      changed,
    };
  }
}

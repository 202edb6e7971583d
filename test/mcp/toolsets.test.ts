import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ACTIONS } from "../../protocol/index.js";
import { EXCLUDED, EXTRA_TOOLS, toolName } from "../../mcp/tools.js";
import { ALL_TOOLSETS, DEFAULT_TOOLSETS, TOOLSET_OF, TOOLSETS } from "../../mcp/toolsets.js";
import { TOOLSETS_TOOL } from "../../mcp/toolsets-tool.js";
import { CLI_MAIN, TestDaemon } from "../helpers/daemon.js";
import { mcpClient, mcpUrl, textOf, type TransportKind } from "./mcp-client.js";

/** What the default tools/list may weigh (JSON bytes): every MCP turn of an agent carries it. */
const DEFAULT_LIST_MAX_BYTES = 40 * 1024;

/**
 * The MCP trial's ten tasks (issue 38) and the tools each needs: every one must be reachable from
 * the default toolsets plus the `toolsets` tool.
 */
const TRIAL: Record<string, string[]> = {
  "SSH and scp in": ["ssh_open"],
  "a dev server previewed and opened in Chromium over CDP": ["shell", "ports_wait", "preview_open", "browser_open"],
  "a desktop app read from screenshots and clicked": ["computer", "shell"],
  "an external coder run in a task": ["repos_add", "tasks_run"],
  "Nix by hand": ["shell", "state_catalog"],
  "a port found": ["ports_list"],
  "a REPL in a terminal": ["shell", "jobs_input", "jobs_output"],
  "a verified release asset": ["files_download", "files_extract"],
  "an observe-only hand-off": ["tokens_create", "console_open"],
  "files read and changed": ["files_read", "files_edit", "files_search"],
};

describe("the toolset table", () => {
  const tools = [...ACTIONS.filter((a) => !(a.name in EXCLUDED)).map((a) => a.name), ...EXTRA_TOOLS.map((t) => t.name)];

  it("puts every tool in a toolset (a new action is one line in mcp/toolsets.ts TOOLSET_OF)", () => {
    const missing = tools.filter((name) => !(name in TOOLSET_OF));
    expect(missing, `add "<action>": "<toolset>" to TOOLSET_OF in mcp/toolsets.ts for: ${missing.join(", ")}`).toEqual([]);
  });

  it("names only tools that exist, in toolsets that exist", () => {
    expect(Object.keys(TOOLSET_OF).filter((name) => !tools.includes(name))).toEqual([]);
    for (const set of Object.values(TOOLSET_OF)) expect(ALL_TOOLSETS).toContain(set);
  });

  it("lists core by default", () => {
    expect(DEFAULT_TOOLSETS).toContain("core");
    expect(DEFAULT_TOOLSETS.every((name) => TOOLSETS[name].default)).toBe(true);
  });
});

describe("MCP toolsets", () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await TestDaemon.start();
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
  });

  describe.each<TransportKind>(["http", "stdio"])("over %s, a session with the defaults", (kind) => {
    let mcp: Client;
    const changes: number[] = [];
    beforeAll(async () => {
      mcp = await mcpClient(daemon, kind, daemon.token, {});
      mcp.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes.push(Date.now()));
    });
    afterAll(async () => {
      await mcp?.close();
    });

    it(`lists the default toolsets and the toolsets tool in at most ${DEFAULT_LIST_MAX_BYTES / 1024} KB, without outputSchemas`, async () => {
      const listed = await mcp.listTools();
      const bytes = Buffer.byteLength(JSON.stringify(listed));
      expect(bytes).toBeLessThanOrEqual(DEFAULT_LIST_MAX_BYTES);
      const names = listed.tools.map((t) => t.name);
      const expected = Object.entries(TOOLSET_OF)
        .filter(([, set]) => DEFAULT_TOOLSETS.includes(set))
        .map(([name]) => toolName(name));
      expect(names.sort()).toEqual([TOOLSETS_TOOL, ...expected].sort());
      expect(listed.tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name)).toEqual([]);
      // The toolsets tool names every toolset, so an agent chooses without a call.
      const description = listed.tools.find((t) => t.name === TOOLSETS_TOOL)!.description ?? "";
      for (const name of ALL_TOOLSETS) expect(description).toContain(`${name} — `);
    });

    it("enables toolsets on request: the client is told the list changed, and lists them", async () => {
      const result = await mcp.callTool({ name: TOOLSETS_TOOL, arguments: { enable: ["web", "desktop"] } });
      expect(result.isError, textOf(result)).toBeFalsy();
      const { toolsets } = result.structuredContent as { toolsets: { name: string; listed: boolean; tools: string[] }[] };
      expect(toolsets.find((t) => t.name === "web")).toMatchObject({ listed: true, tools: expect.arrayContaining(["preview_open"]) });
      expect(toolsets.find((t) => t.name === "access")).toMatchObject({ listed: false, tools: expect.arrayContaining(["ssh_open"]) });
      await expect.poll(() => changes.length).toBeGreaterThan(0);
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["preview_open", "browser_open", "ports_list", "computer", "shell"]));
      expect(names).not.toContain("ssh_open");

      await mcp.callTool({ name: TOOLSETS_TOOL, arguments: { disable: ["desktop"] } });
      expect((await mcp.listTools()).tools.map((t) => t.name)).not.toContain("computer");
    });

    it("refuses an unknown toolset by name, and calls a tool of a toolset not listed", async () => {
      const refused = await mcp.callTool({ name: TOOLSETS_TOOL, arguments: { enable: ["nope"] } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ code: "invalid_request", path: "/enable" });
      expect(textOf(refused)).toContain("core");
      const stat = await mcp.callTool({ name: "files_stat", arguments: { path: "/" } });
      expect(stat.isError, textOf(stat)).toBeFalsy();
    });
  });

  it("reaches every tool of the MCP trial's ten tasks from the defaults and the toolsets tool", async () => {
    const mcp = await mcpClient(daemon, "http", daemon.token, {});
    try {
      const listed = new Set((await mcp.listTools()).tools.map((t) => t.name));
      const { toolsets } = (await mcp.callTool({ name: TOOLSETS_TOOL, arguments: {} })).structuredContent as {
        toolsets: { name: string; tools: string[] }[];
      };
      for (const [task, needs] of Object.entries(TRIAL)) {
        for (const tool of needs) {
          const via = listed.has(tool) ? "default" : toolsets.find((t) => t.tools.includes(tool))?.name;
          expect(via, `${task}: ${tool}`).toBeDefined();
        }
      }
    } finally {
      await mcp.close();
    }
  });

  it("?toolsets=all lists every tool; outputSchemas=1 adds each object result's outputSchema", async () => {
    const mcp = await mcpClient(daemon, "http", daemon.token, { toolsets: "all", outputSchemas: true });
    try {
      const { tools } = await mcp.listTools();
      expect(tools.length).toBe(Object.keys(TOOLSET_OF).length + 1);
      expect(tools.find((t) => t.name === "shell")?.outputSchema).toBeDefined();
    } finally {
      await mcp.close();
    }
  });

  it("refuses an unknown toolset when a session starts: HTTP 400, and `hotline mcp` exits 2", async () => {
    const url = mcpUrl(daemon);
    url.searchParams.set("toolsets", "core,nope");
    const res = await fetch(url, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${daemon.token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('no toolset "nope"');
    const cli = spawnSync(process.execPath, [CLI_MAIN, "mcp", "--toolsets", "nope"], { env: daemon.cliEnv, encoding: "utf8", input: "" });
    expect(cli.status).toBe(2);
    expect(cli.stderr).toContain('no toolset "nope"');
  });
});

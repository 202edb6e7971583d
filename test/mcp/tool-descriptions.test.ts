import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { ACTIONS } from "../../protocol/index.js";
import { EXCLUDED, toolName, WEBSOCKET_ONLY } from "../../mcp/tools.js";
import { TestDaemon } from "../helpers/daemon.js";
import { guideParts } from "../helpers/guide.js";
import { mcpClient, textOf } from "./mcp-client.js";

/** A tool description is read in every session that lists the tools: each one stays short. */
const MAX_DESCRIPTION_CHARS = 2000;

/** Words that name an action's topic besides the words of its own name. */
const TOPIC: Record<string, string[]> = {
  state: ["daemon", "guide", "nix"],
  files: ["file", "directory", "path", "url"],
  secrets: [".env"],
  search: ["match", "grep"],
};

/** `files.write` → the stems a description of it must use one of: file, directory … or write. */
function topicWords(action: string): string[] {
  return action.split(".").flatMap((word) => [word.replace(/s$/, "").slice(0, 5), ...(TOPIC[word] ?? [])]);
}

let daemon: TestDaemon;
let mcp: Client;
let listed: Tool[];
beforeAll(async () => {
  daemon = await TestDaemon.start();
  mcp = await mcpClient(daemon, "http");
  listed = (await mcp.listTools()).tools;
});
afterAll(async () => {
  await mcp?.close();
  await daemon?.stop();
  daemon?.cleanup();
});

describe("every MCP tool's description", () => {
  const tools = async () => listed;
  const generated = ACTIONS.filter((a) => !(a.name in EXCLUDED));
  const unoffered = Object.keys(EXCLUDED).flatMap((a) => [a, toolName(a)]);

  it.each(generated.map((a) => a.name))("%s: complete sentences, for its own action, for MCP", async (name) => {
    const tool = (await tools()).find((t) => t.name === toolName(name))!;
    const description = tool.description ?? "";
    const paragraphs = description.split("\n\n");
    expect(description.length, description).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS);
    // Nothing cut off: no paragraph (or line of one) ends in a colon, comma or ellipsis.
    for (const line of description.split("\n").filter(Boolean)) expect(line, `a line of ${name}`).not.toMatch(/([:,;]|…|\.\.\.)$/);
    // Nothing it does not contain: no "above", "below" or "see X" into the guide around it.
    expect(description).not.toMatch(/\b(above|below)\b/i);
    expect(description).not.toMatch(/\(see [^)]*\)/i);
    // Its first paragraph is about its own action.
    const first = paragraphs[0]!.toLowerCase();
    expect(
      topicWords(name).some((w) => first.includes(w)),
      `${name}: "${paragraphs[0]}" names none of ${topicWords(name)}`,
    ).toBe(true);
    // The rules are its own: every action named in backticks is a tool, never one MCP lacks.
    for (const other of unoffered) expect(description, `${name} names ${other}`).not.toContain(`\`${other}\``);
    for (const option of WEBSOCKET_ONLY[name] ?? []) {
      expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain(option);
      expect(description).not.toContain(`\`${option}\``);
    }
    // It says what the tool returns (the outputSchema goes only to clients that ask), each field once.
    const returns = /\bReturns (\{[^\n]*\}|\[[^\n]*\])\./.exec(description)?.[1];
    expect(returns, `${name}: a "Returns {…}." sentence`).toBeDefined();
    expect(description.split("Returns {").length, `${name}: one Returns sentence`).toBe(2);
    // And it says where the rest of its rules are: a guide section that documents it.
    const section = /hotline:\/\/guide\/([a-z0-9-]+)/.exec(description)?.[1];
    expect(guideParts().sections.find((s) => s.name === section)?.actions, `${name}'s section`).toContain(name);
  });

  it("the ones agents got wrong say what their action needs", async () => {
    const byName = new Map((await tools()).map((t) => [t.name, t.description ?? ""]));
    expect(byName.get("secrets_write")).toContain("exactly one of `repo`");
    expect(byName.get("secrets_write")).not.toContain("One project, one sandbox");
    expect(byName.get("tasks_merge")).toContain("`details.files` listing the conflicting paths.");
    expect(byName.get("jobs_cancel")).toContain("processes outside the group are stopped as well.");
    expect(byName.get("files_write")).toMatch(/chunks of 512 KiB.*`final: false`.*`upload`.*`offset`/s);
    expect(byName.get("files_read")).not.toMatch(/binary/i);
  });

  it("terminal_open says everything it returns, the SSH fields too", async () => {
    const description = (await tools()).find((t) => t.name === "terminal_open")!.description ?? "";
    for (const field of [
      "webTerminalUrl",
      "expiresAt",
      "job",
      "sshCommand",
      "sshHost",
      "sshPort",
      "sshUser",
      "sshKnownHosts",
      "sshHostKeyFingerprint",
    ])
      expect(description).toMatch(new RegExp(`Returns .*\\b${field}\\b`));
  });

  it("says nothing twice: no rule sentence that only repeats the Returns line, no CLI usage", async () => {
    for (const tool of await tools()) {
      expect(tool.description, tool.name).not.toMatch(/(^|\n)Result `\{[^`]*\}`\.(\n|$)/);
      expect(tool.description, tool.name).not.toMatch(/\bCLI: `hotline /);
    }
  });

  it("refuses a WebSocket-only option by name, and state_info's text says what the daemon is", async () => {
    const refused = await mcp.callTool({ name: "files_read", arguments: { path: "/etc/hostname", binary: true } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: "invalid_request", path: "/binary" });
    const info = await mcp.callTool({ name: "state_info", arguments: {} });
    const text = textOf(info);
    const structured = info.structuredContent as { version: string; system: string; actions: { name: string }[] };
    expect(text).toContain(`"version":"${structured.version}"`);
    expect(text).toContain(structured.system);
    expect(text).toContain(`${structured.actions.length} entries: state.info, state.guide`);
  });
});

describe("the guide over MCP", () => {
  it("is the core resource, one resource per section and the whole text, each read with its SHA-256", async () => {
    const parts = guideParts();
    const { resources } = await mcp.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris.slice(0, parts.sections.length + 2)).toEqual([
      "hotline://guide",
      ...parts.sections.map((s) => `hotline://guide/${s.name}`),
      "hotline://guide/all",
    ]);
    for (const [uri, text] of [
      ["hotline://guide", parts.core],
      ["hotline://guide/jobs", parts.sections.find((s) => s.name === "jobs")!.text],
      ["hotline://guide/all", parts.all],
    ] as const) {
      const content = (await mcp.readResource({ uri })).contents[0] as { text: string; _meta?: { sha256?: string } };
      expect(content.text, uri).toBe(text);
      const { createHash } = await import("node:crypto");
      expect(content._meta?.sha256).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    }
    expect(resources[0]!.size).toBeLessThanOrEqual(24 * 1024);
    const instructions = mcp.getInstructions() ?? "";
    expect(instructions).toContain("hotline://guide/<section>");
  });
});

import { readFile } from "node:fs/promises";
import type { ActionDefinition, Scope } from "../protocol/define.js";
import { ERROR_CODES } from "../protocol/errors.js";
import { ACTIONS } from "../protocol/index.js";
import { publishedSchemas } from "../protocol/json-schema.js";
import { COMPUTER_DESCRIPTION, COMPUTER_INPUT_SCHEMA, COMPUTER_TOOL } from "./computer.js";
import { keyRules } from "./guide-rules.js";
import { compactInputSchema, resultShape } from "./compact.js";
import { guideUri } from "./resources.js";
import { TOOLSET_OF, type ToolsetName } from "./toolsets.js";

/**
 * Actions that get no MCP tool, each with the reason. A test fails when an action has neither a
 * tool nor an entry here, so a new action is a decision, not an accident.
 */
export const EXCLUDED: Readonly<Record<string, string>> = {
  // A follow pushes events on the caller's connection for as long as the job runs; an MCP tool
  // call has one result. Waiting tool calls report the same events as notifications/progress.
  "jobs.follow": "MCP has no event stream per tool call: waiting tool calls send notifications/progress instead",
  // Only meaningful on the connection that called jobs.follow, which MCP never opens.
  "jobs.unfollow": "stops a jobs.follow, which MCP does not offer",
  // Watches push events (fs.change, job.created/state/progress) on the caller's connection until
  // it unwatches; an MCP tool call has one result, so these would subscribe to nothing it can see.
  "files.watch": "MCP has no event stream per tool call: list or stat again, or run a job that waits for the change",
  "files.unwatch": "stops a files.watch, which MCP does not offer",
  "jobs.watch": "MCP has no event stream per tool call: jobs_list shows every job, jobs_wait waits for one",
  "jobs.unwatch": "stops a jobs.watch, which MCP does not offer",
  // Agents built for computer use send Anthropic's tool input (snake_case, `action`): the
  // `computer` tool below takes exactly that and answers screenshots as MCP image content.
  "desktop.screenshot": "the computer tool (Anthropic's computer-use input) takes screenshots and returns them as image content",
  "desktop.act": "the computer tool (Anthropic's computer-use input) runs the steps, each followed by a screenshot",
};

/** Tools that are not one action each: the computer-use tool (see computer.ts). Manage tokens only. */
export const EXTRA_TOOLS: readonly ToolDescription[] = [
  {
    name: COMPUTER_TOOL,
    description: COMPUTER_DESCRIPTION,
    inputSchema: COMPUTER_INPUT_SCHEMA,
    annotations: { title: "computer", readOnlyHint: false },
  },
];

/**
 * Parameters only a WebSocket client can use, left out of the tool's inputSchema and description
 * (and refused when sent): `binary` replies with a binary frame, which an MCP result cannot carry.
 */
export const WEBSOCKET_ONLY: Readonly<Record<string, readonly string[]>> = {
  "files.read": ["binary"],
};

/**
 * What a tool must say that the guide's rules for its action do not, because this transport differs:
 * each is the whole rule, in sentences written for an MCP caller.
 */
const MCP_RULES: Readonly<Record<string, string>> = {
  "files.read": "The bytes come in `data`, as text or as base64 (`encoding` says which).",
  "files.write":
    "One call carries at most 1 MiB of request, so send content over 512 KiB in chunks of 512 KiB of raw bytes (base64: 699,052 characters): " +
    "the first chunk with `final: false` and no `upload` (its result has `done: false` and the `upload` id), " +
    "each later one with that `upload`, the same `path` and `offset` = the bytes received so far, " +
    "and the last one without `final: false`, which publishes the file atomically. " +
    "`mode`, `parents` and `ifMatch` go on the first chunk only. An upload belongs to this MCP session and is abandoned after 5 minutes without a chunk.",
  "secrets.write": "Give exactly one of `repo` (the clone's `.env`) or `task` (the task worktree's `.env`).",
};

/** One tool as tools/list shows it. */
export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  annotations: { title: string; readOnlyHint: boolean };
}

/** `files.download` → `files_download`: MCP clients accept only [A-Za-z0-9_-] in tool names. */
export function toolName(action: string): string {
  return action.replace(/\./g, "_");
}

/** The actions that have a tool, generated from protocol/ (a new action appears with no edit here). */
export function toolActions(actions: readonly ActionDefinition[] = ACTIONS): ActionDefinition[] {
  return actions.filter((a) => !(a.name in EXCLUDED));
}

/** The action a tool name stands for, or undefined. */
export function actionOfTool(name: string, actions: readonly ActionDefinition[] = ACTIONS): ActionDefinition | undefined {
  return toolActions(actions).find((a) => toolName(a.name) === name);
}

/**
 * An action that starts a job: its params take `wait` and its result carries the job's status as
 * `job` (shell, files.*, prepare …). jobs.wait returns `job` too but starts nothing (no `wait`).
 */
export function startsJob(action: ActionDefinition): boolean {
  const result = action.result as { properties?: Record<string, unknown> };
  return "wait" in action.params.properties && result.properties?.job !== undefined;
}

/** The MCP layer waits this long for a started job by default (the tool's `wait` overrides it). */
export const DEFAULT_WAIT_MS = 30_000;

const JOB_RULE =
  `Waits up to \`wait\` ms (default ${DEFAULT_WAIT_MS}) and returns the job's status and output (head and tail when long); ` +
  "a job still running returns its status, the output so far and the next call (jobs_wait, jobs_output, jobs_cancel). " +
  "`wait: 0` returns the status at once, without output. A progressToken gets progress notifications; cancelling the call cancels the job.";

/** What an error result's structuredContent holds: the wire error (see results.ts errorResult). */
const TOOL_ERROR_SCHEMA = {
  type: "object",
  required: ["code", "message"],
  properties: {
    code: { type: "string", enum: Object.keys(ERROR_CODES) },
    message: { type: "string" },
    path: { type: "string", description: "JSON pointer to the bad parameter" },
    details: { type: "object" },
  },
  additionalProperties: false,
} as const;

/**
 * A tool's outputSchema: the action's result or, for an `isError` result, the error — both travel as
 * structuredContent, and MCP clients (the SDK's among them) validate whichever arrives against it.
 */
function resultOrError(result: Record<string, unknown>): ToolDescription["outputSchema"] & object {
  const { $schema, title, ...body } = result;
  return { $schema, title, type: "object", anyOf: [body, TOOL_ERROR_SCHEMA] };
}

/** The guide as the tools are built from it: the whole text, and the section documenting each action. */
export interface GuideForTools {
  text: string;
  sections: ReadonlyArray<{ name: string; actions: readonly string[] }>;
}

/** A published params schema without the parameters this transport does not offer. */
function mcpParams(schema: ToolDescription["inputSchema"], omit: readonly string[]): ToolDescription["inputSchema"] {
  if (omit.length === 0) return schema;
  const properties = { ...(schema.properties as Record<string, unknown>) };
  for (const name of omit) delete properties[name];
  return { ...schema, properties };
}

/** `files.write` → `files_write` in backticks, for every action that is a tool: the names an MCP caller calls. */
function toolNames(text: string): string {
  return text.replace(/`([a-z]+(?:\.[a-z]+)+)`/g, (whole, name: string) =>
    ACTIONS.some((a) => a.name === name) && !(name in EXCLUDED) ? `\`${toolName(name)}\`` : whole,
  );
}

/**
 * An action's description, each thing once: its summary, the MCP job rule, its own rules (without
 * what MCP does not offer: the WEBSOCKET_ONLY parameters and the EXCLUDED actions), what it returns
 * (its result's fields: the outputSchema is sent only to a client that asks), and where the rest is.
 */
function describeTool(action: ActionDefinition, guide: GuideForTools, omit: readonly string[], result: Record<string, unknown>): string {
  const section = guide.sections.find((s) => s.actions.includes(action.name))?.name;
  const parts = [
    action.summary,
    startsJob(action) ? JOB_RULE : "",
    MCP_RULES[action.name] ?? "",
    toolNames(withoutRepeats(keyRules(guide.text, action.name, [...omit, ...Object.keys(EXCLUDED)]))),
    `Returns ${resultShape(result)}.${section ? ` Full rules: the resource ${guideUri(section)}.` : ""}`,
  ];
  return parts.filter(Boolean).join("\n\n");
}

/**
 * The guide's rules without what a tool description says otherwise: a bare `Result \`{…}\`.` (the
 * Returns sentence names the fields) and the CLI's usage (an MCP caller calls the tool).
 */
function withoutRepeats(rules: string): string {
  return rules
    .replace(/(^|\s)Result `\{[^`]*\}`\.(?=\s|$)/g, "")
    .replace(/(^|\s)CLI: `[^`]*`\.(?=\s|$)/g, "")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .join("\n");
}

/** Which tools a session lists. */
export interface ToolChoice {
  scope: Scope;
  /** The toolsets listed (TOOLSET_OF); every tool when undefined. */
  toolsets?: readonly ToolsetName[];
  /** Each tool with its outputSchema (the result or the error): for clients that validate structuredContent. */
  outputSchemas?: boolean;
}

/** One tool as the build describes it: the tool (with its outputSchema), its toolset and the scope it needs. */
export interface CatalogEntry {
  tool: ToolDescription;
  toolset?: ToolsetName;
  scope: Scope;
}

/**
 * Every tool: `inputSchema` is the action's published params schema (schemas/actions/<name>.params.json)
 * without WEBSOCKET_ONLY parameters, compacted (compact.ts); `outputSchema` its result schema when
 * that is an object. Building it walks the whole guide once per tool (~0.1–0.2 s of CPU), so the
 * build writes it (dist/mcp/tools.json) and a session only picks from it (loadCatalog).
 */
export function toolCatalog(guide: GuideForTools, actions: readonly ActionDefinition[] = ACTIONS): CatalogEntry[] {
  const schemas = publishedSchemas(actions);
  const generated = toolActions(actions).map((action): CatalogEntry => {
    const omit = WEBSOCKET_ONLY[action.name] ?? [];
    const params = schemas.get(`actions/${action.name}.params.json`) as ToolDescription["inputSchema"];
    const result = schemas.get(`actions/${action.name}.result.json`) as Record<string, unknown>;
    const tool: ToolDescription = {
      name: toolName(action.name),
      description: describeTool(action, guide, omit, result),
      inputSchema: compactInputSchema(mcpParams(params, omit)),
      annotations: { title: action.name, readOnlyHint: action.scope === "observe" },
    };
    // MCP requires an object outputSchema; a result of another shape is described by the text only.
    if (result.type === "object") tool.outputSchema = resultOrError(result);
    return { tool, toolset: TOOLSET_OF[action.name], scope: action.scope };
  });
  const extras = EXTRA_TOOLS.map((tool): CatalogEntry => ({ tool, toolset: TOOLSET_OF[tool.name], scope: "manage" }));
  return [...generated, ...extras];
}

/** The tools a session lists, in its toolsets, for its token's scope. */
export function selectTools(catalog: readonly CatalogEntry[], choice: ToolChoice): ToolDescription[] {
  return catalog
    .filter((e) => choice.scope === "manage" || e.scope === "observe")
    .filter((e) => choice.toolsets === undefined || (e.toolset !== undefined && choice.toolsets.includes(e.toolset)))
    .map(({ tool: { outputSchema, ...tool } }) => (choice.outputSchemas && outputSchema ? { ...tool, outputSchema } : tool));
}

/** The file the build writes the catalog to, beside this module in dist/. */
export const CATALOG_FILE = "tools.json";

let catalog: Promise<CatalogEntry[]> | undefined;

/**
 * The build's catalog (read once per process), or, where there is none (run from sources), one built
 * from `guide()`, the daemon's guide.
 */
export function loadCatalog(guide: () => Promise<GuideForTools>): Promise<CatalogEntry[]> {
  catalog ??= readFile(new URL(CATALOG_FILE, import.meta.url), "utf8").then(
    (text) => JSON.parse(text) as CatalogEntry[],
    async () => toolCatalog(await guide()),
  );
  return catalog;
}

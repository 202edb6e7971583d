import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { HotlineError, type ActionName, type HotlineClient } from "../client/index.js";
import type { Scope } from "../protocol/define.js";
import { COMPUTER_TOOL, computerTool } from "./computer.js";
import { withCodeResults } from "./code-results.js";
import { callJobTool, type CallContext } from "./job-call.js";
import { listResources, readResource, RESOURCE_TEMPLATES, GUIDE_URI } from "./resources.js";
import { actionResult, errorResult } from "./results.js";
import { actionOfTool, loadCatalog, selectTools, startsJob, toolName, WEBSOCKET_ONLY } from "./tools.js";
import { DEFAULT_TOOLSETS, TOOLSET_OF, type ToolsetName } from "./toolsets.js";
import { SessionToolsets, TOOLSETS_TOOL, toolsetsTool } from "./toolsets-tool.js";

const INSTRUCTIONS = [
  "hotline is a daemon inside this sandbox that runs commands as managed jobs, downloads and extracts files, prepares Nix environments and manages git worktrees for tasks.",
  `Before the first call, read the resource ${GUIDE_URI}: the agent guide's compact core (how jobs behave, the common tools with an example each, errors, and an index of its sections).`,
  `Each section is the resource ${GUIDE_URI}/<section> (e.g. ${GUIDE_URI}/filesystem), with every rule of the tools it documents; each tool's description names its section. ${GUIDE_URI}/all is the whole guide.`,
  `Run commands with ${toolName("shell")}: a short command returns its output in one call; a long one returns its job id and the next call to make (${toolName("jobs.wait")}, ${toolName("jobs.output")}, ${toolName("jobs.cancel")}).`,
  "Job output is also the resource hotline://jobs/{id}/output. Errors come back as tool results with a stable code, a message and the path of the bad parameter.",
  `The tools are listed by toolset; ${TOOLSETS_TOOL} lists the others (desktop, previews, SSH, workspaces, Nix …) and enables them.`,
].join("\n");

/**
 * The SDK validates with it only the answers to elicitation requests, which this server never
 * sends; its default, a new Ajv per session, cost 30–100 ms of the event loop at every session's start.
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "hotline's MCP server asks for no elicitation" }),
};

/** What a session lists (README: MCP, toolsets). */
export interface McpServerOptions {
  /** The toolsets listed at first (DEFAULT_TOOLSETS when undefined). */
  toolsets?: readonly ToolsetName[];
  /** Each tool with its outputSchema. */
  outputSchemas?: boolean;
}

/**
 * One MCP session's server over one client connection to the daemon: tools generated from
 * protocol/ (only observe tools for an observe token), results shaped for agents, the guide as a
 * resource. Every call goes to the daemon through the client, so its scopes and errors apply unchanged.
 */
export async function createMcpServer(client: HotlineClient, options: McpServerOptions = {}): Promise<Server> {
  const info = await client.request("state.info");
  const scope: Scope = info.scope === "manage" ? "manage" : "observe";
  const catalog = () => loadCatalog(() => client.request("state.guide", { section: "all" }));
  const toolsets = new SessionToolsets(options.toolsets ?? DEFAULT_TOOLSETS, async () => {
    const byToolset = new Map<ToolsetName, string[]>();
    for (const tool of selectTools(await catalog(), { scope })) {
      const set = TOOLSET_OF[tool.annotations.title];
      if (set) byToolset.set(set, [...(byToolset.get(set) ?? []), tool.name]);
    }
    return byToolset;
  });
  const server = new Server(
    { name: "hotline", version: info.version },
    {
      capabilities: { tools: { listChanged: true }, resources: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: NO_ELICITATION,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [toolsetsTool(), ...selectTools(await catalog(), { scope, toolsets: toolsets.names, outputSchemas: options.outputSchemas })],
  }));
  const computer = computerTool(client);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    if (request.params.name === TOOLSETS_TOOL) {
      try {
        const { result, changed } = await toolsets.call(request.params.arguments ?? {});
        if (changed) await server.sendToolListChanged();
        return result;
      } catch (err) {
        return errorResult(err);
      }
    }
    if (request.params.name === COMPUTER_TOOL && scope === "manage")
      return computer((request.params.arguments ?? {}) as Parameters<typeof computer>[0]).catch(errorResult);
    const action = actionOfTool(request.params.name);
    if (!action)
      return errorResult(new HotlineError("unknown_action", `no tool ${request.params.name}; tools/list shows the tools of this token`));
    const params = request.params.arguments ?? {};
    const websocketOnly = (WEBSOCKET_ONLY[action.name] ?? []).find((name) => name in params);
    if (websocketOnly)
      return errorResult(
        new HotlineError(
          "invalid_request",
          `${request.params.name}: ${websocketOnly} is not offered over MCP (see the tool's inputSchema)`,
          {
            path: `/${websocketOnly}`,
          },
        ),
      );
    const token = request.params._meta?.progressToken;
    const ctx: CallContext = { signal: extra.signal };
    if (token !== undefined)
      ctx.progress = (update) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...update } });
    try {
      if (startsJob(action)) return await withCodeResults(client, action.name, await callJobTool(client, action, params, ctx));
      return actionResult(action.name, await client.request(action.name as ActionName, params as never));
    } catch (err) {
      return errorResult(err);
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listResources(client) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(client, request.params.uri));
  return server;
}

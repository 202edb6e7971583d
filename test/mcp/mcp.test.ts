import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ACTIONS } from "../../protocol/index.js";
import { compactInputSchema } from "../../mcp/compact.js";
import { EXCLUDED, EXTRA_TOOLS, toolName, WEBSOCKET_ONLY } from "../../mcp/tools.js";
import { TOOLSETS_TOOL } from "../../mcp/toolsets-tool.js";
import { groupMembers } from "../helpers/process-group.js";
import { CLI_MAIN, TestDaemon, type TestClient } from "../helpers/daemon.js";
import { mcpClient, textOf, type TransportKind } from "./mcp-client.js";

const ROOT = new URL("../../", import.meta.url).pathname;

function publishedParams(action: string): unknown {
  return JSON.parse(readFileSync(join(ROOT, "schemas/actions", `${action}.params.json`), "utf8"));
}

let daemon: TestDaemon;
let ws: TestClient;
beforeAll(async () => {
  daemon = await TestDaemon.start();
  ws = await daemon.client();
});
afterAll(async () => {
  await ws?.close();
  await daemon?.stop();
  daemon?.cleanup();
});

describe("exclusions", () => {
  it("name real actions, each with a reason", () => {
    const names = ACTIONS.map((a) => a.name as string);
    for (const [name, reason] of Object.entries(EXCLUDED)) {
      expect(names).toContain(name);
      expect(reason.length).toBeGreaterThan(20);
    }
  });
});

describe("hotline mcp without a daemon", () => {
  it("exits 69 naming the missing daemon.json", () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-mcp-"));
    try {
      const run = spawnSync(process.execPath, [CLI_MAIN, "mcp"], {
        env: { ...process.env, HOTLINE_STATE_DIR: join(dir, "state"), HOTLINE_CONFIG_DIR: join(dir, "config") },
        encoding: "utf8",
        input: "",
      });
      expect(run.status).toBe(69);
      expect(run.stderr).toContain(join(dir, "state", "daemon.json"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each<TransportKind>(["stdio", "http"])("MCP over %s", (kind) => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await mcpClient(daemon, kind);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("lists one tool per action minus the exclusions, each inputSchema the published params schema", async () => {
    const { tools } = await mcp.listTools();
    const expected = [
      TOOLSETS_TOOL,
      ...ACTIONS.filter((a) => !(a.name in EXCLUDED)).map((a) => toolName(a.name)),
      ...EXTRA_TOOLS.map((t) => t.name),
    ];
    expect(tools.map((t) => t.name).sort()).toEqual(expected.sort());
    for (const action of ACTIONS) {
      const tool = tools.find((t) => t.name === toolName(action.name));
      if (!tool) continue;
      // The published params schema, without the options a WebSocket client alone can use, compacted.
      const published = publishedParams(action.name) as { properties: Record<string, unknown> };
      for (const option of WEBSOCKET_ONLY[action.name] ?? []) delete published.properties[option];
      expect(tool.inputSchema, action.name).toEqual(compactInputSchema(published));
      expect(tool.description).toContain(action.summary);
    }
  });

  it("tells the agent what hotline is and to read the guide", () => {
    const instructions = mcp.getInstructions() ?? "";
    expect(instructions).toContain("hotline");
    expect(instructions).toContain("hotline://guide");
  });

  it("runs a short shell command and returns its output in one call", async () => {
    const result = await mcp.callTool({ name: "shell", arguments: { command: "echo hello from mcp" } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { job: { state: string }; output: { data: string } };
    expect(structured.job.state).toBe("succeeded");
    expect(structured.output.data).toBe("hello from mcp\n");
    expect(textOf(result)).toContain("hello from mcp");
  });

  it("returns a running status and the next call when the job outlives wait; jobs_wait finishes it", async () => {
    const result = await mcp.callTool({ name: "shell", arguments: { command: "echo begun; sleep 3; echo done", wait: 1000 } });
    const job = (result.structuredContent as { job: { id: string; state: string } }).job;
    expect(job.state).toBe("running");
    const text = textOf(result);
    expect(text).toContain(`jobs_wait {"job": "${job.id}", "timeoutMs": 30000}`);
    expect(text).toContain("begun");
    const waited = await mcp.callTool({ name: "jobs_wait", arguments: { job: job.id, timeoutMs: 30000 } });
    expect((waited.structuredContent as { job: { state: string } }).job.state).toBe("succeeded");
  });

  it("reports a bad parameter as an isError result with code, message and path", async () => {
    const result = await mcp.callTool({ name: "shell", arguments: { command: "true", cwd: "relative/dir" } });
    expect(result.isError).toBe(true);
    const { error } = JSON.parse((result.content as { text: string }[])[1]!.text) as { error: { code: string; path: string } };
    expect(error.code).toBe("invalid_request");
    expect(error.path).toBe("/cwd");
    // The same error as structuredContent, which the SDK client validated against the tool's outputSchema.
    expect(result.structuredContent).toEqual({ ...error, message: expect.stringContaining("cwd") });
  });

  it("sends rising progress notifications for a slow loopback download", async () => {
    const chunk = Buffer.alloc(64 * 1024, 97);
    const chunks = 10;
    // A file served slowly: one chunk every 250 ms, with a length so the daemon knows the total.
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { "Content-Length": String(chunk.length * chunks) });
      let sent = 0;
      const timer = setInterval(() => {
        res.write(chunk);
        if (++sent === chunks) {
          clearInterval(timer);
          res.end();
        }
      }, 250);
      res.on("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const dest = join(daemon.dirs.root, `slow-${kind}.bin`);
      const seen: { progress: number; total?: number }[] = [];
      const result = await mcp.callTool({ name: "files_download", arguments: { url: `http://127.0.0.1:${port}/file`, dest } }, undefined, {
        onprogress: (p) => void seen.push(p),
      });
      expect((result.structuredContent as { job: { state: string } }).job.state).toBe("succeeded");
      expect(readFileSync(dest).length).toBe(chunk.length * chunks);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    } finally {
      server.close();
    }
  });

  it("cancelling a running shell call cancels its job and leaves no process behind", async () => {
    const controller = new AbortController();
    const marker = `mcp-cancel-${kind}-${Date.now()}`;
    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const call = mcp.callTool({ name: "shell", arguments: { command: `echo ${marker}; sleep 300 & wait` } }, undefined, {
      signal: controller.signal,
      onprogress: () => progressed(),
    });
    call.catch(() => undefined);
    await running; // the job printed its first line: it runs
    const { jobs } = (await ws.ok("jobs.list", { state: "running", kind: "shell" })) as {
      jobs: { id: string; title: string; pid: number }[];
    };
    const job = jobs.find((j) => j.title.includes(marker))!;
    expect(groupMembers(job.pid).length).toBeGreaterThanOrEqual(2);
    controller.abort();
    await expect(call).rejects.toThrow();
    const waited = (await ws.ok("jobs.wait", { job: job.id, timeoutMs: 30000 })) as { job: { state: string } };
    expect(waited.job.state).toBe("cancelled");
    expect(groupMembers(job.pid)).toEqual([]);
  });

  it("serves the guide's core as a resource with state.guide's text and SHA-256", async () => {
    const guide = (await ws.ok("state.guide")) as { text: string; sha256: string };
    const { resources } = await mcp.listResources();
    const listed = resources.find((r) => r.uri === "hotline://guide")!;
    expect(listed._meta?.sha256).toBe(guide.sha256);
    const read = await mcp.readResource({ uri: "hotline://guide" });
    const content = read.contents[0] as { text: string; _meta?: { sha256?: string } };
    expect(content.text).toBe(guide.text);
    expect(content._meta?.sha256).toBe(guide.sha256);
  });

  it("serves job output through the resource template", async () => {
    const { resourceTemplates } = await mcp.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain("hotline://jobs/{id}/output");
    const started = await mcp.callTool({ name: "shell", arguments: { command: "printf 'line one\\nline two\\n'" } });
    const id = (started.structuredContent as { job: { id: string } }).job.id;
    const read = await mcp.readResource({ uri: `hotline://jobs/${id}/output` });
    expect((read.contents[0] as { text: string }).text).toBe("line one\nline two\n");
  });
});

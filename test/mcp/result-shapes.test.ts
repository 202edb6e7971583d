import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { TestDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, STANDIN_REF, tempDir } from "../nix/helpers.js";
import { mcpClient, textOf } from "./mcp-client.js";

const hasNix = toolAvailable("nix");

/**
 * Result shapes a job tool can answer besides "a job started": the SDK client validates each
 * structuredContent against the tool's outputSchema, so a shape the MCP layer mishandles fails here.
 */
describe.skipIf(!hasNix)("MCP job tools that answer without a job", () => {
  let daemon: TestDaemon;
  let mcp: Client;
  const dirs: string[] = [];
  beforeAll(async () => {
    daemon = await TestDaemon.start({ env: { HOTLINE_NIXPKGS: STANDIN_REF } });
    mcp = await mcpClient(daemon, "http");
    await mcp.listTools(); // the client keeps each tool's outputSchema and checks results against it
  });
  afterAll(async () => {
    await mcp?.close();
    await daemon?.stop();
    daemon?.cleanup();
    cleanup(...dirs);
  });

  it("prepare of a recipe already prepared answers ready: true, not an internal error", async () => {
    const workspace = tempDir("mcp-ready");
    dirs.push(workspace);
    const first = await mcp.callTool({ name: "prepare", arguments: { workspace, packages: ["hello-a"], wait: 50_000 } });
    expect(first.isError, textOf(first)).toBeFalsy();
    expect((first.structuredContent as { job: { state: string } }).job.state).toBe("succeeded");
    const again = await mcp.callTool({ name: "prepare", arguments: { workspace, packages: ["hello-a"] } });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ ready: true });
    expect(textOf(again)).toContain("prepare: ok");
  });
});

describe("MCP job tools with wait: 0", () => {
  let daemon: TestDaemon;
  let mcp: Client;
  beforeAll(async () => {
    daemon = await TestDaemon.start();
    mcp = await mcpClient(daemon, "http");
    await mcp.listTools();
  });
  afterAll(async () => {
    await mcp?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("returns the started job's status at once, without its output, and the calls that follow", async () => {
    // Output first, then a pause: a reply that read the output would carry the 66,000 characters.
    const result = await mcp.callTool({ name: "shell", arguments: { command: "head -c 66000 /dev/zero | tr '\\0' x; sleep 2", wait: 0 } });
    expect(result.isError, textOf(result)).toBeFalsy();
    const structured = result.structuredContent as { job: { id: string; state: string }; output?: unknown };
    expect(structured.job.state).toBe("running");
    expect(structured.output).toBeUndefined();
    const text = textOf(result);
    expect(text).not.toContain("xxxx");
    expect(text.length).toBeLessThan(1000);
    expect(text).toContain(`jobs_wait {"job": "${structured.job.id}"`);
    const waited = await mcp.callTool({ name: "jobs_wait", arguments: { job: structured.job.id, timeoutMs: 30000 } });
    expect((waited.structuredContent as { job: { state: string } }).job.state).toBe("succeeded");
  });
});

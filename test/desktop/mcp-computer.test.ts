import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon } from "../helpers/daemon.js";
import { desktopToolsAvailable, Recorder, XServer } from "../helpers/x-server.js";
import { mcpClient } from "../mcp/mcp-client.js";

const ready = desktopToolsAvailable();
const WINDOW = { x: 400, y: 200, width: 400, height: 320 };

type Content = Array<{ type: string; text?: string; data?: string; mimeType?: string }>;

describe.skipIf(!ready)("the MCP computer tool: Anthropic's computer-use input, unchanged", () => {
  let x: XServer;
  let daemon: TestDaemon;
  let mcp: Client;
  let recorder: Recorder;

  beforeAll(async () => {
    x = await XServer.start(1600, 1000);
    daemon = await TestDaemon.start({ args: ["--display", x.display] });
    recorder = await Recorder.start(x, join(daemon.dirs.root, "events.jsonl"), WINDOW, "#ff0000");
    mcp = await mcpClient(daemon, "http");
  });

  afterAll(async () => {
    await mcp?.close();
    recorder?.stop();
    await daemon?.stop();
    daemon?.cleanup();
    await x?.stop();
  });

  it("is listed with the computer-use input schema, instead of desktop_screenshot and desktop_act", async () => {
    const { tools } = await mcp.listTools();
    const computer = tools.find((t) => t.name === "computer")!;
    expect(Object.keys(computer.inputSchema.properties ?? {}).sort()).toEqual(
      ["action", "coordinate", "duration", "scroll_amount", "scroll_direction", "start_coordinate", "text"].sort(),
    );
    expect(tools.map((t) => t.name)).not.toContain("desktop_act");
    expect(tools.map((t) => t.name)).toContain("browser_open");
  });

  it("screenshot is MCP image content; left_click in its pixels lands; type arrives exactly", async () => {
    const shot = await mcp.callTool({ name: "computer", arguments: { action: "screenshot" } });
    const content = shot.content as Content;
    const img = content.find((c) => c.type === "image")!;
    expect(img.mimeType).toBe("image/png");
    const png = Buffer.from(img.data!, "base64");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]); // IHDR: 1600x1000 fitted, scale 0.8
    const button = [(WINDOW.x + WINDOW.width / 2) * 0.8, (WINDOW.y + WINDOW.height / 4) * 0.8];
    const clicked = await mcp.callTool({ name: "computer", arguments: { action: "left_click", coordinate: button } });
    expect(clicked.isError).toBeFalsy();
    expect((clicked.content as Content).some((c) => c.type === "image")).toBe(true);
    await recorder.waitFor((e) => e.event === "button", "the button clicked through MCP");
    const entry = [(WINDOW.x + WINDOW.width / 2) * 0.8, (WINDOW.y + (WINDOW.height * 3) / 4) * 0.8];
    await mcp.callTool({ name: "computer", arguments: { action: "left_click", coordinate: entry } });
    await mcp.callTool({ name: "computer", arguments: { action: "type", text: "çà ✓" } });
    await recorder.waitFor((e) => e.event === "text" && e.value === "çà ✓", "the text typed through MCP");
    const where = await mcp.callTool({ name: "computer", arguments: { action: "cursor_position" } });
    expect((where.content as Content)[0]!.text).toBe(`X=${entry[0]},Y=${entry[1]}`);
    const bad = await mcp.callTool({ name: "computer", arguments: { action: "key", text: "ctrl+nosuchkey" } });
    expect(bad.isError).toBe(true);
  });
});

import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { desktopToolsAvailable, Recorder, XServer } from "../helpers/x-server.js";
import { mcpClient } from "../mcp/mcp-client.js";

// desktop.act's key text reaches xdotool, which ends a key list at the first word that names one
// of its commands and runs the rest: "shift exec touch F" would run `touch F`. Key names only.

const ready = desktopToolsAvailable();
const WINDOW = { x: 100, y: 100, width: 400, height: 320 };

describe.skipIf(!ready)("desktop.act key text: key names only, never an xdotool command", () => {
  let x: XServer;
  let daemon: TestDaemon;
  let client: TestClient;
  let mcp: Client;
  let recorder: Recorder;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hotline-keys-"));
    x = await XServer.start(1024, 768);
    daemon = await TestDaemon.start({ args: ["--display", x.display] });
    client = await daemon.client();
    recorder = await Recorder.start(x, join(daemon.dirs.root, "events.jsonl"), WINDOW, "#00ff00");
    mcp = await mcpClient(daemon, "http");
  });

  afterAll(async () => {
    await mcp?.close();
    recorder?.stop();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    await x?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const attacks = (file: string): Array<Record<string, unknown>> => [
    { do: "key", text: `shift exec touch ${file}` },
    { do: "key", text: `Return EXEC touch ${file}` },
    { do: "hold_key", text: `shift exec touch ${file}`, duration: 0 },
    { do: "scroll", text: `ctrl exec touch ${file}`, scrollDirection: "down", scrollAmount: 1 },
    { do: "key", text: `a sleep 0 exec touch ${file}` },
  ];

  it("a command name among the keys is refused with the bad key named, and nothing runs", async () => {
    for (const [i, step] of attacks(join(dir, "ws")).entries()) {
      const file = join(dir, `ws-${i}`);
      const reply = await client.call("desktop.act", { ...step, text: String(step.text).replace(join(dir, "ws"), file) });
      expect(reply.error, JSON.stringify(step)).toMatchObject({ code: "invalid_request", path: "/text" });
      expect(reply.error.message).toMatch(/"(exec|EXEC|sleep)"/);
      expect(reply.error.details?.key).toMatch(/^(exec|EXEC|sleep)$/);
      // A well-formed step afterwards has run to completion: anything the bad one started would have too.
      await client.ok("desktop.act", { do: "key", text: "shift" });
      expect(existsSync(file), `${JSON.stringify(step)} ran a program`).toBe(false);
    }
  });

  it("through MCP's computer tool (a client that allows computer but not shell) too", async () => {
    const file = join(dir, "mcp");
    const bad = await mcp.callTool({ name: "computer", arguments: { action: "key", text: `shift exec touch ${file}` } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('\\"exec\\"');
    const held = await mcp.callTool({ name: "computer", arguments: { action: "hold_key", text: `exec touch ${file}`, duration: 0 } });
    expect(held.isError).toBe(true);
    await mcp.callTool({ name: "computer", arguments: { action: "key", text: "shift" } });
    expect(existsSync(file)).toBe(false);
  });

  it("every command the installed xdotool knows is refused as a key, in any case", async () => {
    const help = execFileSync("xdotool", ["help"], { env: x.env, encoding: "utf8" });
    const commands = help
      .split("\n")
      .slice(1)
      .map((l) => l.trim())
      .filter(Boolean);
    expect(commands).toContain("exec");
    for (const command of commands) {
      for (const text of [command, command.toUpperCase(), `a ${command}`]) {
        const reply = await client.call("desktop.act", { do: "key", text });
        expect(reply.error, text).toMatchObject({ code: "invalid_request", path: "/text", details: { key: text.split(" ").at(-1) } });
      }
    }
  });

  it("malformed key text is refused before xdotool sees it", async () => {
    for (const text of ["--window 1 a", "ctrl++", "a+", "ctrl+ +a", "help", "a\u0000b", "Return;id"]) {
      const reply = await client.call("desktop.act", { do: "key", text });
      expect(reply.error, JSON.stringify(text)).toMatchObject({ code: "invalid_request", path: "/text" });
    }
  });

  it("real key names and chords still work", async () => {
    // Keys go where the pointer is (no window manager): into the recorder's entry.
    const entry = [WINDOW.x + WINDOW.width / 2, WINDOW.y + (WINDOW.height * 3) / 4];
    await client.ok("desktop.act", { do: "left_click", coordinate: entry, scaledTo: { width: 1024, height: 768 } });
    const ctrlA = recorder.events().filter((e) => e.event === "ctrl+a").length;
    await client.ok("desktop.act", { do: "key", text: "ctrl+a" });
    await recorder.waitFor(() => recorder.events().filter((e) => e.event === "ctrl+a").length > ctrlA, "ctrl+a");
    await client.ok("desktop.act", { do: "key", text: "x y shift+z 1 2 BackSpace" });
    await recorder.waitFor((e) => e.event === "text" && e.value === "xyZ1", "x y shift+z 1 2 BackSpace typed xyZ1");
    await client.ok("desktop.act", { do: "hold_key", text: "shift", duration: 0 });
  });
});

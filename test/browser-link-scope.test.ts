import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CLI_MAIN, useDaemon, type Frame } from "./helpers/daemon.js";
import { mcpClient } from "./mcp/mcp-client.js";

// A link's scope is asked for in the one call (at most the asker's): an observe-only hand-off no
// longer needs a second connection with an observe token — over MCP, a second session.

/** The page's socket of a link (the token as a subprotocol, the daemon's own Origin). */
function linkSocket(daemonUrl: string, link: string): Promise<WebSocket> {
  const token = new URLSearchParams(new URL(link).hash.slice(1)).get("token")!;
  const ws = new WebSocket(daemonUrl, ["hotline", `hotline.token.${token}`], { origin: daemonUrl.replace(/^ws/, "http") });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

function ask(ws: WebSocket, frame: Frame): Promise<Frame> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer): void => {
      const reply = JSON.parse(data.toString()) as Frame;
      if (reply.id !== frame.id) return;
      ws.off("message", onMessage);
      resolve(reply);
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify(frame));
  });
}

/** What /web/link says of a link's token: its scope and expiry. */
async function linkStatus(daemonUrl: string, link: string): Promise<{ scope: string; expiresAt: string }> {
  const token = new URLSearchParams(new URL(link).hash.slice(1)).get("token")!;
  const res = await fetch(`${daemonUrl.replace(/^ws/, "http")}/web/link`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { result: { scope: string; expiresAt: string } }).result;
}

describe("a link's scope, asked for in the call", () => {
  const t = useDaemon();

  it("console_open over MCP with scope observe: one session hands out a watch-only console", async () => {
    const mcp = await mcpClient(t.daemon, "http");
    try {
      const reply = await mcp.callTool({ name: "console_open", arguments: { scope: "observe" } });
      expect(reply.isError).toBeFalsy();
      const link = reply.structuredContent as Frame;
      expect(link).toMatchObject({ available: true, scope: "observe" });
      expect(await linkStatus(t.daemon.url, link.consoleUrl)).toMatchObject({ scope: "observe" });
      const { job } = await t.client.ok("shell", { command: "sleep 30" });
      const page = await linkSocket(t.daemon.url, link.consoleUrl);
      expect((await ask(page, { id: 1, action: "jobs.status", job: job.id })).result.state).toBe("running");
      expect((await ask(page, { id: 2, action: "jobs.cancel", job: job.id })).error.code).toBe("forbidden");
      page.close();
      await t.client.ok("jobs.cancel", { job: job.id, wait: 10_000 });
      // Without scope, the session's own (manage).
      const manage = await mcp.callTool({ name: "console_open", arguments: {} });
      expect((manage.structuredContent as Frame).scope).toBe("manage");
    } finally {
      await mcp.close();
    }
  });

  it("console.open: manage from an observe token is forbidden at /scope; observe is fine", async () => {
    const { token } = await t.client.ok("tokens.create", { scope: "observe" });
    const watcher = await t.daemon.client({}, token);
    try {
      const refused = await watcher.call("console.open", { scope: "manage" });
      expect(refused.error).toMatchObject({ code: "forbidden", path: "/scope" });
      expect(refused.error.message).toMatch(/scope observe/);
      const ok = await watcher.ok("console.open", { scope: "observe" });
      expect(ok.scope).toBe("observe");
      const bad = await t.client.call("console.open", { scope: "root" });
      expect(bad.error).toMatchObject({ code: "invalid_request", path: "/scope" });
    } finally {
      await watcher.close();
    }
  });

  it("terminal.open with scope observe: a watch-only web link and no SSH credential; each credential says when it expires", async () => {
    const watch = await t.client.ok("terminal.open", { scope: "observe", ttlMs: 120_000 });
    expect(watch).toMatchObject({ available: true, scope: "observe" });
    expect(watch.sshCommand).toBeUndefined();
    expect(watch.sshUnavailable).toMatch(/observe/);
    expect(watch.webTerminalExpiresAt).toBe(watch.expiresAt);
    expect(await linkStatus(t.daemon.url, watch.webTerminalUrl)).toMatchObject({ scope: "observe", expiresAt: watch.webTerminalExpiresAt });
    const page = await linkSocket(t.daemon.url, watch.webTerminalUrl);
    expect((await ask(page, { id: 1, action: "jobs.input", job: watch.job.id, data: "echo hi\n" })).error.code).toBe("forbidden");
    page.close();

    const full = await t.client.ok("terminal.open", { job: watch.job.id, ttlMs: 90_000 });
    expect(full).toMatchObject({ available: true, scope: "manage" });
    expect(full.sshCommand).toBeDefined();
    const tokens = (await t.client.ok("tokens.list")).tokens as Frame[];
    expect(full.webTerminalExpiresAt).toBe(tokens.find((k) => k.id === full.tokenId)!.expiresAt);
    expect(full.sshExpiresAt).toBe(tokens.find((k) => k.id === full.sshTokenId)!.expiresAt);
    expect(full.expiresAt).toBe(full.webTerminalExpiresAt);
    await t.client.ok("jobs.cancel", { job: watch.job.id, signal: "SIGHUP", wait: 10_000 });
  });

  it("the CLI: hotline console --scope observe, hotline terminal --link --scope observe", async () => {
    const out = execFileSync(process.execPath, [CLI_MAIN, "console", "--scope", "observe"], { env: t.daemon.cliEnv, encoding: "utf8" });
    expect(out).toMatch(/\/web\/console#token=\S+\n\(observe link, expires /);
    const json = execFileSync(process.execPath, [CLI_MAIN, "terminal", "--link", "--scope", "observe", "--json"], {
      env: t.daemon.cliEnv,
      encoding: "utf8",
    });
    const opened = JSON.parse(json) as Frame;
    expect(opened).toMatchObject({ available: true, scope: "observe" });
    await t.client.ok("jobs.cancel", { job: opened.job.id, signal: "SIGHUP", wait: 10_000 });
  });
});

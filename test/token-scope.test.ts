import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type Frame, type TestClient, useDaemon } from "./helpers/daemon.js";

/** What a token issues never outlives it or exceeds it, dies with it, and cannot use up what a greater token needs. */

const closed = (client: TestClient): Promise<{ code: number; reason: string }> =>
  new Promise((resolve) => client.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));

const tokenOf = (link: string): string => new URLSearchParams(new URL(link).hash.slice(1)).get("token")!;

const YEAR_MS = 366 * 24 * 3600 * 1000;

/** A link's socket as its page opens it: the token as a subprotocol, from the daemon's own origin. */
function pageSocket(url: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ["hotline", `hotline.token.${token}`], { headers: { Origin: url.replace(/^ws/, "http") } });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

let nextId = 1;
function ask(ws: WebSocket, action: string, params: Record<string, unknown> = {}): Promise<Frame> {
  const id = nextId++;
  return new Promise((resolve) => {
    const onMessage = (data: Buffer): void => {
      const reply = JSON.parse(data.toString()) as Frame;
      if (reply.id !== id) return;
      ws.off("message", onMessage);
      resolve(reply);
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ id, action, ...params }));
  });
}

describe("what a token issues is bounded by it", () => {
  const ctx = useDaemon();

  it("a console link's token opens its page only: it mints no token (the 366-day manage token of the review) nor link", async () => {
    const link = await ctx.client.ok("console.open", { ttlMs: 900_000 });
    const token = tokenOf(link.consoleUrl);
    // Not as a bearer token, on the API socket or /mcp (before: accepted, scope manage).
    await expect(ctx.daemon.client({}, token)).rejects.toMatchObject({ status: 403, body: expect.stringContaining("browser link") });
    const mcp = await fetch(`${ctx.daemon.url.replace(/^ws/, "http")}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(mcp.status).toBe(403);
    // On its page's socket it works, within its scope, but issues nothing.
    const page = await pageSocket(ctx.daemon.url, token);
    try {
      expect((await ask(page, "jobs.list")).ok).toBe(true);
      const minted = await ask(page, "tokens.create", { scope: "manage", ttlMs: YEAR_MS }); // before: ok, for 366 days
      expect(minted.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("browser link") });
      expect((await ask(page, "console.open")).error).toMatchObject({ code: "forbidden" });
      const jobsBefore = (await ctx.client.ok("jobs.list")).jobs.length;
      expect((await ask(page, "terminal.open")).error).toMatchObject({ code: "forbidden" });
      expect((await ctx.client.ok("jobs.list")).jobs.length).toBe(jobsBefore); // no terminal was started for nobody
    } finally {
      page.close();
    }
  });

  it("a token never outlives its issuer, and revoking the issuer ends what it issued: tokens, connections, links", async () => {
    const parent = await ctx.client.ok("tokens.create", { scope: "manage", ttlMs: 120_000, label: "parent" });
    const asParent = await ctx.daemon.client({}, parent.token);
    const child = await asParent.ok("tokens.create", { scope: "manage", ttlMs: YEAR_MS, label: "child" });
    expect(child.expiresAt).toBe(parent.expiresAt); // before: a year from now
    const link = await asParent.ok("console.open", { ttlMs: 3_600_000 });
    expect(Date.parse(link.expiresAt)).toBeLessThanOrEqual(Date.parse(parent.expiresAt));
    const asChild = await ctx.daemon.client({}, child.token);
    const childClosed = closed(asChild);
    await ctx.client.ok("tokens.revoke", { tokenId: parent.id });
    const { code, reason } = await childClosed; // before: the child's connection stayed open
    expect(code).toBe(4001);
    expect(reason).toContain(child.id);
    await expect(ctx.daemon.client({}, child.token)).rejects.toMatchObject({ status: 401 });
    await expect(pageSocket(ctx.daemon.url, tokenOf(link.consoleUrl))).rejects.toThrow(/401/);
    const live = ((await ctx.client.ok("tokens.list")).tokens as Frame[]).map((t) => t.id);
    expect(live).not.toContain(child.id);
    expect(live).not.toContain(link.tokenId);
  });
});

describe("budgets: an observe token cannot fill the issued-token table", () => {
  const ctx = useDaemon();

  it("console.open by one observe token stops at its share; manage's tokens.create and terminal.open still work", async () => {
    const { token: observe } = await ctx.client.ok("tokens.create", { scope: "observe", ttlMs: 600_000 });
    const watcher = await ctx.daemon.client({}, observe);
    let opened = 0;
    let refusal: Frame | undefined;
    // Before: 999 links, until the table of 1000 was full. In batches, so the test takes seconds either way.
    while (!refusal && opened < 1001) {
      const replies = await Promise.all(Array.from({ length: 50 }, () => watcher.call("console.open", { ttlMs: 600_000 })));
      opened += replies.filter((r) => r.ok).length;
      refusal = replies.find((r) => !r.ok);
    }
    await watcher.close();
    expect(refusal?.error).toMatchObject({ code: "limit_exceeded", message: expect.stringContaining("an observe token") });
    expect(opened).toBe(20); // a fiftieth of the 1000
    expect((await ctx.client.call("tokens.create", { scope: "observe" })).ok).toBe(true);
    const terminal = await ctx.client.call("terminal.open", { command: "sleep 30" });
    expect(terminal.ok ? "ok" : terminal.error).toBe("ok");
    await ctx.client.ok("jobs.cancel", { job: terminal.result.job.id });
    console.log(`observe token's console.open: ${opened} links, then limit_exceeded; manage's tokens.create and terminal.open ok`);
  });
});

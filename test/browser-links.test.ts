import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { TestClient, useDaemon, withDaemon, type Frame } from "./helpers/daemon.js";

/** Opens a socket the way a page does: the link token as a subprotocol, with the given Origin/Host. */
function linkSocket(
  url: string,
  token: string,
  headers: Record<string, string>,
): Promise<{ ws?: WebSocket; status?: number; body?: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, ["hotline", `hotline.token.${token}`], { headers, perMessageDeflate: false });
    ws.once("open", () => resolve({ ws }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    ws.once("error", () => resolve({}));
  });
}

/** A request on a raw link socket; resolves with the whole reply frame. */
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

function tokenOf(link: string): string {
  return new URLSearchParams(new URL(link).hash.slice(1)).get("token")!;
}

const httpOf = (wsUrl: string): string => wsUrl.replace(/^ws/, "http");

describe("browser links (terminal.open, console.open) and their socket", () => {
  const ctx = useDaemon();

  it("terminal.open starts a terminal job and links to it with a token in the fragment only", async () => {
    const result = await ctx.client.ok("terminal.open", { cols: 100, rows: 30 });
    expect(result.available).toBe(true);
    expect(result.job).toMatchObject({ kind: "terminal", state: "running" });
    const url = new URL(result.webTerminalUrl);
    expect(url.origin).toBe(httpOf(ctx.daemon.url));
    expect(url.pathname).toBe("/web/terminal");
    expect(url.search).toBe("");
    expect(new URLSearchParams(url.hash.slice(1)).get("job")).toBe(result.job.id);
    const expires = Date.parse(result.expiresAt) - Date.now();
    expect(expires).toBeGreaterThan(14 * 60_000);
    expect(expires).toBeLessThanOrEqual(15 * 60_000);
    const tokens = (await ctx.client.ok("tokens.list")).tokens as Frame[];
    expect(tokens.find((t) => t.id === result.tokenId)).toMatchObject({ scope: "manage", label: "terminal link" });
    // Reattaching gives a new link to the same job.
    const again = await ctx.client.ok("terminal.open", { job: result.job.id });
    expect(again.job.id).toBe(result.job.id);
    expect(again.tokenId).not.toBe(result.tokenId);
    await ctx.client.ok("jobs.cancel", { job: result.job.id, signal: "SIGHUP", wait: 10_000 }); // an interactive bash ignores SIGTERM
  });

  it("caps a link's lifetime and refuses to reattach to a job that is not a running terminal", async () => {
    expect((await ctx.client.call("terminal.open", { ttlMs: 24 * 3600_000 })).error).toMatchObject({
      code: "invalid_request",
      path: "/ttlMs",
    });
    const { job } = await ctx.client.ok("shell", { command: "true", wait: 10_000 });
    expect((await ctx.client.call("terminal.open", { job: job.id })).error).toMatchObject({ code: "conflict", path: "/job" });
  });

  it("accepts a link token only from the daemon's own page origin, under a host it answers for", async () => {
    const link = await ctx.client.ok("console.open", {});
    const token = tokenOf(link.consoleUrl);
    const origin = httpOf(ctx.daemon.url);
    const good = await linkSocket(ctx.daemon.url, token, { origin });
    expect(good.ws?.protocol).toBe("hotline");
    const reply = await ask(good.ws!, { id: 1, action: "jobs.list" });
    expect(reply.ok).toBe(true);
    good.ws!.close();
    const port = new URL(ctx.daemon.url).port;
    expect((await linkSocket(ctx.daemon.url, token, { origin: `http://localhost:${port}`, host: `localhost:${port}` })).ws).toBeDefined();
    const foreignOrigin = await linkSocket(ctx.daemon.url, token, { origin: "http://evil.example" });
    expect(foreignOrigin.status).toBe(403);
    const noOrigin = await linkSocket(ctx.daemon.url, token, {});
    expect(noOrigin.status).toBe(403);
    // DNS rebinding: evil.example resolved to 127.0.0.1, so Origin and Host agree but name the wrong host.
    const rebound = await linkSocket(ctx.daemon.url, token, { origin: `http://evil.example:${port}`, host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body!).error.message).toContain("allowedHosts");
    const tampered = await linkSocket(ctx.daemon.url, `${token.slice(0, -2)}xx`, { origin });
    expect(tampered.status).toBe(401);
  });

  it("serves the pages with CSP, nosniff and no-referrer, and refuses a foreign Host", async () => {
    const res = await fetch(`${httpOf(ctx.daemon.url)}/web/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await res.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script[^>]*>[^<]+<\/script>/);
    expect((await fetch(`${httpOf(ctx.daemon.url)}/web/assets/terminal.js`)).headers.get("content-type")).toContain("text/javascript");
    expect((await fetch(`${httpOf(ctx.daemon.url)}/web/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    const port = new URL(ctx.daemon.url).port;
    const foreign = await new Promise<number>((resolve, reject) => {
      // fetch() may not set Host; a raw request can.
      import("node:http").then(({ request }) => {
        const req = request({ host: "127.0.0.1", port, path: "/web/console", headers: { host: `rebind.example:${port}` } }, (r) => {
          r.resume();
          resolve(r.statusCode!);
        });
        req.on("error", reject);
        req.end();
      }, reject);
    });
    expect(foreign).toBe(403);
  });

  it("tells an expired or tampered link from a valid one at /web/link (401 with the reason)", async () => {
    const link = await ctx.client.ok("console.open", { ttlMs: 10_000 });
    const token = tokenOf(link.consoleUrl);
    const at = `${httpOf(ctx.daemon.url)}/web/link`;
    const ok = await fetch(at, { headers: { authorization: `Bearer ${token}` } });
    expect(await ok.json()).toMatchObject({ ok: true, result: { scope: "manage" } });
    const bad = await fetch(at, { headers: { authorization: `Bearer ${token}x` } });
    expect(bad.status).toBe(401);
    await ctx.client.ok("tokens.revoke", { tokenId: link.tokenId });
    expect((await fetch(at, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it("an observe token gets an observe console link: it can watch but not type or cancel", async () => {
    const { token: observe } = await ctx.client.ok("tokens.create", { scope: "observe" });
    const watcher = await ctx.daemon.client({}, observe);
    const link = await watcher.ok("console.open", {});
    expect(link.scope).toBe("observe");
    const { job } = await ctx.client.ok("shell", { command: "sleep 30" });
    const page = await linkSocket(ctx.daemon.url, tokenOf(link.consoleUrl), { origin: httpOf(ctx.daemon.url) });
    expect((await ask(page.ws!, { id: 1, action: "jobs.input", job: job.id, data: "x" })).error.code).toBe("forbidden");
    expect((await ask(page.ws!, { id: 2, action: "jobs.cancel", job: job.id })).error.code).toBe("forbidden");
    expect((await ask(page.ws!, { id: 3, action: "terminal.open" })).error.code).toBe("forbidden");
    page.ws!.close();
    await watcher.close();
    await ctx.client.ok("jobs.cancel", { job: job.id, wait: 10_000 });
  });
});

describe("jobs.watch", () => {
  const ctx = useDaemon();

  it("sends the snapshot, then job.created and job.state (with the status) for jobs of any connection", async () => {
    const { job: before } = await ctx.client.ok("shell", { command: "true", wait: 10_000 });
    const watcher = await ctx.daemon.client();
    const snapshot = await watcher.ok("jobs.watch", { limit: 10 });
    expect(snapshot.jobs.map((j: Frame) => j.id)).toContain(before.id);
    const { job } = await ctx.client.ok("shell", { command: "exit 3" });
    const created = await watcher.waitFor((f) => f.event === "job.created" && f.job === job.id);
    expect(created.status).toMatchObject({ id: job.id, kind: "shell" });
    const ended = await watcher.waitFor((f) => f.event === "job.state" && f.job === job.id && f.state === "failed");
    expect(ended.status).toMatchObject({ exitCode: 3, state: "failed" });
    expect((await watcher.call("jobs.watch")).error.code).toBe("conflict");
    expect(await watcher.ok("jobs.unwatch")).toEqual({ watching: true });
    const { job: after } = await ctx.client.ok("shell", { command: "true", wait: 10_000 });
    await ctx.client.ok("jobs.status", { job: after.id });
    expect(await watcher.ok("jobs.unwatch")).toEqual({ watching: false });
    expect(watcher.frames.some((f) => f.job === after.id)).toBe(false);
    await watcher.close();
  });
});

describe("jobs.watch with a client that stops reading", () => {
  const ctx = useDaemon();

  it("remembers which jobs changed (no queue) and, once the client reads again, sends each one's current status once", async () => {
    const watcher = await ctx.daemon.client();
    await watcher.ok("jobs.watch");
    const { job: loud } = await ctx.client.ok("shell", { command: "head -c 40000000 /dev/zero" });
    await watcher.ok("jobs.follow", { job: loud.id });
    watcher.ws.pause(); // the daemon's sends to it pile up until its connection is over budget
    await ctx.client.ok("jobs.wait", { job: loud.id, timeoutMs: 60_000 });
    const quiet: string[] = [];
    for (let i = 0; i < 20; i++) quiet.push((await ctx.client.ok("shell", { command: "true", wait: 10_000 })).job.id);
    watcher.ws.resume();
    for (const id of quiet) {
      // Noted while the client was behind: one job.created carrying the final status, no job.state.
      const created = await watcher.waitFor((f) => f.event === "job.created" && f.job === id, 60_000, `job.created of ${id}`);
      expect(created.status.state).toBe("succeeded");
    }
    await watcher.waitForExit(loud.id, 60_000);
    expect(watcher.frames.filter((f) => f.event === "job.state" && quiet.includes(f.job))).toEqual([]);
    await watcher.close();
  });
});

describe("publicUrl", () => {
  it("points links at the public address and answers for its host", async () => {
    await withDaemon({ args: ["--public-url", "https://7070-sbx.example/"] }, async (daemon, client) => {
      const link = await client.ok("console.open", {});
      expect(link.consoleUrl).toMatch(/^https:\/\/7070-sbx\.example\/web\/console#token=hl_/);
      const page = await linkSocket(daemon.url, tokenOf(link.consoleUrl), { origin: "https://7070-sbx.example", host: "7070-sbx.example" });
      expect(page.ws?.protocol).toBe("hotline");
      page.ws!.close();
    });
  });

  it("refuses a publicUrl that is not an http(s) address", async () => {
    await expect(withDaemon({ args: ["--public-url", "ftp://x"] }, async () => undefined)).rejects.toThrow(/publicUrl must be an http/);
  });
});

describe("existing clients", () => {
  const ctx = useDaemon();
  it("a client without Origin still connects with Authorization as before, and one offering other subprotocols gets its first", async () => {
    const ws = new WebSocket(ctx.daemon.url, ["other"], { headers: { authorization: `Bearer ${ctx.daemon.token}` } });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    expect(ws.protocol).toBe("other");
    ws.close();
    const plain = await TestClient.connect(ctx.daemon.url, ctx.daemon.token);
    expect((await plain.ok("state.info")).name).toBe("hotline");
    await plain.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import { createServer, request } from "node:http";
import WebSocket, { WebSocketServer } from "ws";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { freePort, patternHash, patternStream, portOf, previewRequest, rssOf, startApp } from "./helpers.js";

const PARAM = "hotline_preview_token";

function tokenOf(url: string): string {
  return new URL(url).searchParams.get(PARAM)!;
}

/** Opens a WebSocket through the preview (the daemon's address, the preview's Host). */
function previewSocket(daemonUrl: string, port: number, path: string, headers: Record<string, string>): WebSocket {
  return new WebSocket(`ws://127.0.0.1:${portOf(daemonUrl)}${path}`, {
    headers: { Host: `${port}.localhost:${portOf(daemonUrl)}`, ...headers },
  });
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

describe("preview proxy", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let app: Awaited<ReturnType<typeof startApp>>;
  let wss: WebSocketServer;
  const pattern = randomBytes(1024 * 1024);

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
    app = await startApp((req, res) => {
      const url = new URL(req.url!, "http://x");
      if (url.pathname === "/redirect") {
        res.writeHead(302, { Location: `http://localhost:${app.port}/landed?a=1` });
        return void res.end();
      }
      if (url.pathname === "/upload") {
        const hash = createHash("sha256");
        let bytes = 0;
        req.on("data", (c: Buffer) => {
          hash.update(c);
          bytes += c.length;
        });
        req.on("end", () => {
          res.writeHead(200, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ bytes, sha256: hash.digest("hex") }));
        });
        return;
      }
      if (url.pathname === "/download") {
        const size = Number(url.searchParams.get("size"));
        res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": size });
        return void patternStream(size, pattern).pipe(res);
      }
      if (url.pathname === "/sse") {
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        res.write("data: first\n\n");
        return; // held open: the client must see the first event before the stream ends
      }
      res.writeHead(200, {
        "Content-Type": "application/json",
        "X-App-Header": "kept",
        "Access-Control-Allow-Origin": "https://app.example",
      });
      res.end(JSON.stringify({ url: req.url, method: req.method }));
    });
    wss = new WebSocketServer({ server: app.server });
    wss.on("connection", (ws, req) => {
      ws.send(`hello ${req.url}`);
      ws.on("message", (m) => ws.send(String(m)));
    });
  });

  afterAll(async () => {
    wss?.close();
    app?.server.closeAllConnections();
    app?.server.close();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  async function open(port: number, extra: Record<string, unknown> = {}): Promise<{ url: string; token: string; tokenId: string }> {
    const link = await client.ok("preview.open", { port, ...extra });
    expect(link).toMatchObject({ available: true, port });
    return { url: link.url, token: tokenOf(link.url), tokenId: link.tokenId };
  }

  it("trades the link's query token for an HttpOnly cookie on that host, and the app never sees the token", async () => {
    const link = await open(app.port, { path: "/page?token=vite-own&x=1" });
    expect(link.url).toBe(`http://${app.port}.localhost:${portOf(daemon.url)}/page?token=vite-own&x=1&${PARAM}=${link.token}`);
    // A browser's navigation (a client without Sec-Fetch-Mode is answered at once: hardening.test.ts).
    const first = await previewRequest(daemon.url, app.port, {
      path: new URL(link.url).pathname + new URL(link.url).search,
      headers: { "Sec-Fetch-Mode": "navigate" },
    });
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe(`http://${app.port}.localhost:${portOf(daemon.url)}/page?token=vite-own&x=1`);
    const cookies = first.headers["set-cookie"]!;
    expect(cookies[0]).toMatch(
      new RegExp(`^hotline_preview=${link.token}; Path=/; Max-Age=\\d+; HttpOnly; SameSite=None; Secure; Partitioned$`),
    );
    const before = app.seen.length;
    const page = await previewRequest(daemon.url, app.port, {
      path: "/page?token=vite-own&x=1",
      headers: { Cookie: `theirs=1; hotline_preview=${link.token}; also=2`, Origin: `http://${app.port}.localhost:${portOf(daemon.url)}` },
    });
    expect(page.status).toBe(200);
    expect(JSON.parse(page.body)).toEqual({ url: "/page?token=vite-own&x=1", method: "GET" });
    // The app's own headers pass as they are: nothing added, nothing taken (CORS included).
    expect(page.headers["x-app-header"]).toBe("kept");
    expect(page.headers["access-control-allow-origin"]).toBe("https://app.example");
    const seen = app.seen.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers).toMatchObject({
      host: `localhost:${app.port}`,
      cookie: "theirs=1; also=2",
      origin: `http://localhost:${app.port}`,
      "x-forwarded-host": `${app.port}.localhost:${portOf(daemon.url)}`,
      "x-forwarded-proto": "http",
      "x-forwarded-for": "127.0.0.1",
    });
    // The header form works for API clients and is stripped too.
    const viaHeader = await previewRequest(daemon.url, app.port, {
      path: "/api",
      method: "POST",
      headers: { "X-Hotline-Preview-Token": link.token },
    });
    expect(viaHeader.status).toBe(200);
    expect(JSON.stringify(app.seen)).not.toContain(link.token);
    expect(JSON.stringify(app.seen)).not.toContain("hotline_preview");
  });

  it("rewrites the app's redirects to localhost:<port> to the preview's address; SSE streams unbuffered", async () => {
    const { token } = await open(app.port);
    const redirect = await previewRequest(daemon.url, app.port, { path: "/redirect", headers: { "X-Hotline-Preview-Token": token } });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe(`http://${app.port}.localhost:${portOf(daemon.url)}/landed?a=1`);
    const first = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: portOf(daemon.url),
          path: "/sse",
          headers: { Host: `${app.port}.localhost:${portOf(daemon.url)}`, "X-Hotline-Preview-Token": token },
        },
        (res) =>
          res.once("data", (c: Buffer) => {
            resolve(c.toString());
            req.destroy();
          }),
      );
      req.on("error", reject);
      req.end();
    });
    expect(first).toBe("data: first\n\n");
  });

  it("refuses a token for another port, an expired, a revoked, a wrong one and none, each saying why", async () => {
    const other = await freePort();
    const forOther = await open(other);
    const onOther = await previewRequest(daemon.url, app.port, { headers: { "X-Hotline-Preview-Token": forOther.token } });
    expect(onOther.status).toBe(403);
    expect(JSON.parse(onOther.body).error).toMatchObject({
      code: "forbidden",
      details: { reason: "port", port: app.port, tokenPort: other },
    });
    expect(JSON.parse(onOther.body).error.message).toContain("preview.open");

    const short = await open(app.port, { ttlMs: 10_000 });
    const revoked = await open(app.port);
    await client.ok("tokens.revoke", { tokenId: revoked.tokenId });
    const api = daemon.token; // the daemon's own API token opens no preview
    const cases: Array<[string | undefined, number, string]> = [
      [revoked.token, 401, "revoked"],
      [`hlpv_${"x".repeat(43)}`, 401, "wrong"],
      [api, 401, "wrong"],
      [undefined, 401, "none"],
    ];
    for (const [token, status, reason] of cases) {
      const reply = await previewRequest(daemon.url, app.port, { headers: token ? { "X-Hotline-Preview-Token": token } : {} });
      expect(reply.status, reason).toBe(status);
      expect(JSON.parse(reply.body).error.details.reason).toBe(reason);
    }
    // A browser gets the same as a page: HTML that says why and how to get a new link.
    const html = await previewRequest(daemon.url, app.port, {
      headers: { Accept: "text/html", Cookie: `hotline_preview=${revoked.token}` },
    });
    expect(html.headers["content-type"]).toMatch(/^text\/html/);
    expect(html.body).toContain("revoked");
    expect(html.body).toContain("preview.open");
    // Expiry: the short link works, then (past its 10 s) is refused as expired.
    expect((await previewRequest(daemon.url, app.port, { headers: { "X-Hotline-Preview-Token": short.token } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 10_500));
    const expired = await previewRequest(daemon.url, app.port, { headers: { "X-Hotline-Preview-Token": short.token } });
    expect(JSON.parse(expired.body).error.details.reason).toBe("expired");
    expect(JSON.stringify(app.seen)).not.toContain(revoked.token);
  }, 60_000);

  it("preview hosts never reach the API, and the daemon's own port is never previewed", async () => {
    const { token } = await open(app.port);
    // /web/console on a preview host is the app's path, not the daemon's page.
    const page = await previewRequest(daemon.url, app.port, { path: "/web/console", headers: { "X-Hotline-Preview-Token": token } });
    expect(JSON.parse(page.body)).toEqual({ url: "/web/console", method: "GET" });
    // The API token on a preview host's upgrade is a (wrong) preview token, not an API connection.
    const ws = previewSocket(daemon.url, app.port, "/", { Authorization: `Bearer ${daemon.token}` });
    await expect(opened(ws)).rejects.toThrow("HTTP 401");
    // A preview token is not an API token.
    await expect(daemon.client({}, token)).rejects.toMatchObject({ status: 401 });
    const own = await client.call("preview.open", { port: portOf(daemon.url) });
    expect(own.error).toMatchObject({ code: "invalid_request", path: "/port" });
    const self = await previewRequest(daemon.url, portOf(daemon.url), { headers: { Authorization: `Bearer ${daemon.token}` } });
    expect(self.status).toBe(403);
  });

  it("proxies WebSockets on the same host (the app's own `token` passes), and revoking closes them within a second", async () => {
    const link = await open(app.port);
    const ws = previewSocket(daemon.url, app.port, "/hmr?token=vite-own", { Cookie: `hotline_preview=${link.token}` });
    const messages: string[] = [];
    ws.on("message", (m) => messages.push(String(m)));
    await opened(ws);
    ws.send("ping");
    await expect.poll(() => messages).toEqual(["hello /hmr?token=vite-own", "ping"]);
    const closed = new Promise<number>((resolve) => ws.once("close", () => resolve(Date.now())));
    const revokedAt = Date.now();
    await client.ok("tokens.revoke", { tokenId: link.tokenId });
    expect((await closed) - revokedAt).toBeLessThan(1000);
    const upgrade = app.seen.find((s) => s.url === "/hmr?token=vite-own")!;
    expect(upgrade.headers.host).toBe(`localhost:${app.port}`);
    expect(upgrade.headers.cookie).toBeUndefined();
  });

  it("refuses the WebSocket past the 128 open at once with 503, and takes one again once one closes", async () => {
    const { token } = await open(app.port);
    const headers = { "X-Hotline-Preview-Token": token };
    const open128 = Array.from({ length: 128 }, () => previewSocket(daemon.url, app.port, "/many", headers));
    try {
      await Promise.all(open128.map(opened));
      await expect(opened(previewSocket(daemon.url, app.port, "/many", headers))).rejects.toThrow("HTTP 503");
      const closed = new Promise((resolve) => open128[0]!.once("close", resolve));
      open128[0]!.close();
      await closed;
      await expect
        .poll(async () =>
          opened(previewSocket(daemon.url, app.port, "/many", headers)).then(
            () => "open",
            () => "refused",
          ),
        )
        .toBe("open");
    } finally {
      for (const ws of open128) ws.terminate();
    }
  });

  it("answers a waiting page (502, JSON or self-reloading HTML) while nothing listens, then the app", async () => {
    const port = await freePort();
    const { token } = await open(port);
    const json = await previewRequest(daemon.url, port, { headers: { "X-Hotline-Preview-Token": token } });
    expect(json.status).toBe(502);
    expect(JSON.parse(json.body).error).toMatchObject({ code: "unavailable", details: { port, reason: "not_listening" } });
    expect(JSON.parse(json.body).error.message).toContain(`nothing listens on port ${port} in the sandbox yet`);
    const html = await previewRequest(daemon.url, port, { headers: { "X-Hotline-Preview-Token": token, Accept: "text/html" } });
    expect(html.body).toContain('<meta http-equiv="refresh"');
    const server = createServer((_req, res) => res.end("up")).listen(port, "127.0.0.1");
    try {
      await client.ok("ports.wait", { port, timeoutMs: 10_000 });
      const up = await previewRequest(daemon.url, port, { headers: { "X-Hotline-Preview-Token": token } });
      expect(up).toMatchObject({ status: 200, body: "up" });
    } finally {
      server.close();
    }
  });

  it("streams 200 MB up and 200 MB down byte-exact while the daemon's RSS grows by less than 30 MB", async () => {
    const { token } = await open(app.port, { ttlMs: 3_600_000 });
    const size = 200 * 1000 * 1000;
    const headers = { "X-Hotline-Preview-Token": token };
    const pid = daemon.proc.pid!;
    const base = rssOf(pid);
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 50);
    try {
      const up = await previewRequest(daemon.url, app.port, {
        path: "/upload",
        method: "PUT",
        headers: { ...headers, "Content-Length": String(size) },
        body: patternStream(size, pattern),
      });
      expect(JSON.parse(up.body)).toEqual({ bytes: size, sha256: patternHash(size, pattern) });
      const down = await new Promise<{ bytes: number; sha256: string }>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: portOf(daemon.url),
            path: `/download?size=${size}`,
            headers: { Host: `${app.port}.localhost:${portOf(daemon.url)}`, ...headers },
          },
          (res) => {
            const hash = createHash("sha256");
            let bytes = 0;
            res.on("data", (c: Buffer) => {
              hash.update(c);
              bytes += c.length;
            });
            res.on("end", () => resolve({ bytes, sha256: hash.digest("hex") }));
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(down).toEqual({ bytes: size, sha256: patternHash(size, pattern) });
    } finally {
      clearInterval(sampler);
    }
    expect(peak - base).toBeLessThan(30 * 1024 * 1024);
    // state.info still answers promptly after the transfer (the daemon was never held up).
    await client.ok("state.info");
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { connect, createServer, type Server, type Socket } from "node:net";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { describeStall, stallsOverBudget } from "../helpers/stalls.js";
import { portOf, previewRequest, rawExchange, rssOf, startApp, untilQuiet } from "./helpers.js";

/** Issue 33 #5, #11–#14 and issue 38's `curl -L`: the preview proxy's rough edges, on the wire. */

/** A raw app on loopback that answers every request with `answer` (its own framing, as written). */
async function rawApp(answer: string | ((socket: Socket) => void)): Promise<{ server: Server; port: number }> {
  const server = createServer((s: Socket) => {
    s.on("error", () => {});
    s.on("data", () => (typeof answer === "string" ? s.write(answer) : answer(s)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

describe("preview proxy hardening", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let app: Awaited<ReturnType<typeof startApp>>;
  let daemonPort: number;

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
    daemonPort = portOf(daemon.url);
    app = await startApp((req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end(`app ${req.url}`);
    });
  });

  afterAll(async () => {
    app?.server.closeAllConnections();
    app?.server.close();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  async function token(port: number, extra: Record<string, unknown> = {}): Promise<{ url: string; token: string }> {
    const link = await client.ok("preview.open", { port, ...extra });
    return { url: link.url, token: new URL(link.url).searchParams.get("hotline_preview_token")! };
  }

  it("curl -L with no cookie jar gets the page from the link as given; a browser still trades the token for a cookie", async () => {
    const link = await token(app.port, { path: "/page?x=1" });
    const before = app.seen.length;
    // (Not execFileSync: the app answering curl runs in this process.)
    const page = await promisify(execFile)("curl", ["-sS", "-L", "--max-time", "60", "-w", "\n%{http_code}", link.url]);
    expect(page.stdout).toBe("app /page?x=1\n200");
    // A browser's navigation: the redirect, to the same address on the preview's own origin, and the cookie.
    const nav = await previewRequest(daemon.url, app.port, {
      path: `/page?x=1&hotline_preview_token=${link.token}`,
      headers: { "Sec-Fetch-Mode": "navigate", Accept: "text/html" },
    });
    expect(nav.status).toBe(302);
    expect(nav.headers.location).toBe(`http://${app.port}.localhost:${daemonPort}/page?x=1`);
    expect(nav.headers["set-cookie"]?.[0]).toMatch(/^hotline_preview=/);
    // A page opened with the token in its address sends it as Referer: the app sees it without.
    await previewRequest(daemon.url, app.port, {
      path: "/asset.js",
      headers: { "X-Hotline-Preview-Token": link.token, Referer: link.url },
    });
    const seen = app.seen.slice(before);
    expect(seen.map((s) => s.url)).toEqual(["/page?x=1", "/asset.js"]);
    expect(seen[1]!.headers.referer).toBe(`http://${app.port}.localhost:${daemonPort}/page?x=1`);
    expect(JSON.stringify(seen)).not.toContain(link.token);
  });

  it("a link whose path is `//host/…` or `/\\host/…` redirects on the preview's own origin, never to that host", async () => {
    for (const path of ["//evil.example/x", "/\\evil.example/x"]) {
      const link = await token(app.port, { path });
      const nav = await previewRequest(daemon.url, app.port, {
        path: new URL(link.url).pathname + new URL(link.url).search,
        headers: { "Sec-Fetch-Mode": "navigate" },
      });
      expect(nav.status, path).toBe(302);
      // How a browser resolves the Location against the link (WHATWG URL: `\` is `/` in http URLs).
      expect(new URL(nav.headers.location!, link.url).origin, nav.headers.location).toBe(`http://${app.port}.localhost:${daemonPort}`);
    }
    // A Host spelled with more than a name and port (it still names the preview) redirects to the preview's own address.
    const link = await token(app.port);
    const odd = await previewRequest(daemon.url, app.port, {
      path: new URL(link.url).pathname + new URL(link.url).search,
      headers: { Host: `evil.example@${app.port}.localhost:${daemonPort}`, "Sec-Fetch-Mode": "navigate" },
    });
    expect(odd.status).toBe(302);
    expect(odd.headers.location).toBe(`http://${app.port}.localhost:${daemonPort}/`);
  });

  it("sends an absolute-form target to the app as origin-form, and refuses one naming another host (400)", async () => {
    const { token: t } = await token(app.port);
    const host = `${app.port}.localhost:${daemonPort}`;
    const before = app.seen.length;
    const ok = await rawExchange(
      daemonPort,
      `GET http://${host}/abs?y=2 HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${t}\r\nConnection: close\r\n\r\n`,
    );
    expect(ok.text).toMatch(/^HTTP\/1\.1 200 [\s\S]*app \/abs\?y=2/);
    const other = await rawExchange(
      daemonPort,
      `GET http://evil.example/steal HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${t}\r\n\r\n`,
    );
    expect(other.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(other.closed).toBe(true);
    expect(app.seen.slice(before).map((s) => s.url)).toEqual(["/abs?y=2"]);
  });

  it("an app's answer with both Transfer-Encoding and Content-Length reaches the client without the length", async () => {
    const twice = await rawApp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    onTestFinished(() => void twice.server.close());
    const { token: t } = await token(twice.port);
    const host = `${twice.port}.localhost:${daemonPort}`;
    const { text } = await rawExchange(
      daemonPort,
      `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${t}\r\nConnection: close\r\n\r\n`,
    );
    const head = text.slice(0, text.indexOf("\r\n\r\n"));
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\nTransfer-Encoding: chunked(\r\n|$)/i);
    expect(head).not.toMatch(/content-length/i);
    expect(text.slice(head.length + 4)).toBe("3\r\nabc\r\n0\r\n\r\n");
  });

  it("an app that never answers holds at most its port's share of the request budget: other ports are still served", async () => {
    const silent = await rawApp(() => {}); // reads requests, answers none
    onTestFinished(() => void silent.server.close());
    const { token: t } = await token(silent.port);
    const host = `${silent.port}.localhost:${daemonPort}`;
    const held: Socket[] = [];
    onTestFinished(() => held.forEach((s) => s.destroy()));
    const replies: string[] = [];
    // One request per connection (a connection's next request waits for its answer); 130 of them.
    for (let i = 0; i < 130; i++) {
      const s = connect(daemonPort, "127.0.0.1");
      s.on("error", () => {});
      s.on("data", (c: Buffer) => replies.push(c.toString("latin1")));
      s.write(`GET /${i} HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${t}\r\n\r\n`);
      held.push(s);
    }
    await expect.poll(() => replies.length, { timeout: 60_000 }).toBe(2);
    for (const reply of replies) {
      expect(reply).toMatch(/^HTTP\/1\.1 503 /);
      expect(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)).error).toMatchObject({
        code: "limit_exceeded",
        details: { port: silent.port, limit: 128, scope: "port" },
      });
    }
    // Another port's requests still go through.
    const { token: other } = await token(app.port);
    const served = await previewRequest(daemon.url, app.port, { path: "/still", headers: { "X-Hotline-Preview-Token": other } });
    expect(served).toMatchObject({ status: 200, body: "app /still" });
  }, 120_000);

  it("a client pipelining requests without a token and never reading is read no further than it takes answers", async () => {
    const stallsBefore = daemon.stalls.length;
    const pid = daemon.proc.pid!;
    const before = rssOf(pid);
    const socket = connect(daemonPort, "127.0.0.1");
    onTestFinished(() => void socket.destroy());
    socket.on("error", () => {});
    socket.pause();
    // 200,000 requests (8 MB); each refused with a page of ~600 bytes, 120 MB of answers if all were made.
    const flood = `GET / HTTP/1.1\r\nHost: ${app.port}.localhost:${daemonPort}\r\n\r\n`.repeat(40_000);
    for (let i = 0; i < 5; i++) socket.write(flood);
    // Until the daemon has done all it will with the flood (before the fix: answered every request).
    await untilQuiet(pid);
    const grown = rssOf(pid) - before;
    expect(socket.writableLength, "the daemon stopped reading a client that takes no answers").toBeGreaterThan(0);
    expect(grown, `RSS grew by ${Math.round(grown / 2 ** 20)} MiB`).toBeLessThan(40 * 2 ** 20);
    expect(stallsOverBudget(daemon, stallsBefore).map(describeStall)).toEqual([]);
  }, 360_000);
});

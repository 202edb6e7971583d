import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createServer, type Server, type Socket } from "node:net";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { portOf, rawExchange, startApp } from "./helpers.js";

/** The status codes of the responses in a raw stream of them, in order. */
function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

describe("preview proxy on the wire (raw HTTP/1.1)", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let app: Awaited<ReturnType<typeof startApp>>;
  let appSockets = 0;
  let raw: Server;
  let rawPort: number;
  let token: string;
  let rawToken: string;
  let host: string;
  let daemonPort: number;

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
    app = await startApp((req, res) => {
      const url = new URL(req.url!, "http://x");
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (url.pathname === "/204") return void res.writeHead(204).end();
        if (url.pathname === "/304") return void res.writeHead(304, { ETag: '"x"' }).end();
        if (url.pathname === "/pattern") {
          // 16 MiB of distinct bytes in small pieces, each on a turn of its own, so the proxy reads
          // them as small chunks: a queued write of one then does not stop its reading.
          const size = 16 * 1024 * 1024;
          res.writeHead(200, { "Content-Length": size });
          let sent = 0;
          const more = (): void => {
            if (sent >= size) return void res.end();
            const piece = Buffer.alloc(8192);
            for (let i = 0; i < piece.length; i += 4) piece.writeUInt32LE((sent + i) >>> 2, i);
            sent += piece.length;
            if (res.write(piece)) setImmediate(more);
            else res.once("drain", more);
          };
          return more();
        }
        if (url.pathname === "/chunked") {
          res.writeHead(200, { "Content-Type": "text/plain" });
          res.write("one,");
          setTimeout(() => res.end("two"), 20);
          return;
        }
        const body = `${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`;
        res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body) });
        res.end(req.method === "HEAD" ? undefined : body);
      });
    });
    app.server.on("connection", () => appSockets++);
    // An app that answers with a malformed head, to see the proxy refuse to pass it on.
    raw = createServer((s: Socket) => s.once("data", () => s.end("HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 2\r\n\r\nok")));
    await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
    rawPort = (raw.address() as { port: number }).port;
    daemonPort = portOf(daemon.url);
    host = `${app.port}.localhost:${daemonPort}`;
    token = new URL((await client.ok("preview.open", { port: app.port })).url).searchParams.get("hotline_preview_token")!;
    rawToken = new URL((await client.ok("preview.open", { port: rawPort })).url).searchParams.get("hotline_preview_token")!;
  });

  afterAll(async () => {
    app?.server.closeAllConnections();
    app?.server.close();
    raw?.close();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  const req = (method: string, path: string, extra = "", body = "") =>
    `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${token}\r\n${extra}\r\n${body}`;

  it("answers pipelined requests in order on one connection, bodies sized and chunked, and HEAD/204/304 without bodies", async () => {
    const chunkedBody = "3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n\r\n";
    const { text, closed } = await rawExchange(
      daemonPort,
      req("GET", "/one") +
        req("POST", "/two", "Content-Length: 5\r\n", "hello") +
        req("POST", "/three", "Transfer-Encoding: chunked\r\n", chunkedBody) +
        req("HEAD", "/four") +
        req("GET", "/204") +
        req("GET", "/304") +
        req("GET", "/chunked") +
        req("GET", "/last", "Connection: close\r\n"),
    );
    expect(closed).toBe(true);
    expect(statuses(text)).toEqual([200, 200, 200, 200, 204, 304, 200, 200]);
    const bodies = text.split(/HTTP\/1\.1 \d{3} [^\r]*\r\n/).slice(1);
    expect(bodies[0]).toMatch(/\r\n\r\nGET \/one $/);
    expect(bodies[1]).toMatch(/\r\n\r\nPOST \/two hello$/);
    expect(bodies[2]).toMatch(/\r\n\r\nPOST \/three abcdefg$/);
    expect(bodies[3]).toMatch(/Content-Length: 11\r\n[\s\S]*\r\n\r\n$/); // HEAD: the length, no body
    expect(bodies[6]).toContain("Transfer-Encoding: chunked\r\n");
    expect(bodies[6]).toMatch(/\r\n\r\n4\r\none,\r\n3\r\ntwo\r\n0\r\n\r\n$/); // the app's chunks as it sent them
    expect(bodies[7]).toMatch(/Connection: close\r\n[\s\S]*GET \/last $/);
    // The app's requests shared keep-alive sockets.
    expect(appSockets).toBeLessThan(8);
  });

  it("a download to a client that reads slowly arrives byte-exact (the proxy's reused read buffer is never overwritten under a queued write)", async () => {
    const body = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect(daemonPort, "127.0.0.1");
      const chunks: Buffer[] = [];
      let reads = 0;
      socket.on("data", (c: Buffer) => {
        chunks.push(c);
        // Stop reading for a while, twice: the kernel's buffers fill and the daemon's writes to this socket queue up.
        if (++reads === 1 || reads === 200) {
          socket.pause();
          setTimeout(() => socket.resume(), 700);
        }
      });
      socket.on("end", () => resolve(Buffer.concat(chunks)));
      socket.on("error", reject);
      socket.write(req("GET", "/pattern", "Connection: close\r\n"));
    });
    const data = body.subarray(body.indexOf("\r\n\r\n") + 4);
    expect(data.length).toBe(16 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4) if (data.readUInt32LE(i) !== i >>> 2) expect.fail(`byte ${i} differs`);
  });

  it("refuses a request that two parsers could read two ways, before the app sees it", async () => {
    const seenBefore = app.seen.length;
    const smuggled = [
      req("POST", "/s1", "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n"),
      req("POST", "/s2", "Content-Length: 4\r\nContent-Length: 40\r\n", "abcd"),
      req("POST", "/s3", "Transfer-Encoding: chunked, identity\r\n", "0\r\n\r\n"),
      `GET /s4 HTTP/1.1\r\nHost: ${host}\nX-Hotline-Preview-Token: ${token}\r\n\r\n`,
      `GET /s5 HTTP/1.1\r\nHost: ${host}\r\nHost: localhost\r\nX-Hotline-Preview-Token: ${token}\r\n\r\n`,
      `GET /s6 HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${token}\r\n folded\r\n\r\n`,
    ];
    for (const bytes of smuggled) {
      const { text, closed } = await rawExchange(daemonPort, bytes);
      expect(statuses(text)[0], bytes.split("\r\n")[0]).toBeOneOf([400, 501]);
      expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).error.code).toBe("invalid_request");
      expect(closed).toBe(true);
    }
    expect(app.seen.slice(seenBefore).map((s) => s.url)).toEqual([]);
    // A chunked body that breaks its framing after the head went on: that connection is cut, the next one served.
    const broken = await rawExchange(daemonPort, req("POST", "/broken", "Transfer-Encoding: chunked\r\n", "zz\r\n"));
    expect(broken.closed).toBe(true);
    expect(statuses((await rawExchange(daemonPort, req("GET", "/after", "Connection: close\r\n"))).text)).toEqual([200]);
  });

  it("answers a head over the size limit 431, an app's malformed answer 502, and HTTP/1.0 then closes", async () => {
    const big = await rawExchange(daemonPort, req("GET", "/big", `X-Big: ${"a".repeat(20_000)}\r\n`));
    expect(statuses(big.text)).toEqual([431]);
    const malformed = await rawExchange(
      daemonPort,
      `GET / HTTP/1.1\r\nHost: ${rawPort}.localhost:${daemonPort}\r\nX-Hotline-Preview-Token: ${rawToken}\r\nConnection: close\r\n\r\n`,
    );
    expect(statuses(malformed.text)).toEqual([502]);
    expect(malformed.text).not.toContain("\r\nBad Header");
    expect(JSON.parse(malformed.text.slice(malformed.text.indexOf("\r\n\r\n") + 4)).error.details.reason).toBe("upstream_failed");
    const old = await rawExchange(daemonPort, `GET /old HTTP/1.0\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${token}\r\n\r\n`);
    expect(old.closed).toBe(true);
    expect(old.text).toMatch(/^HTTP\/1\.1 200 [\s\S]*GET \/old $/);
  });

  it("a preview host named on a connection that began as the daemon's own gets 421, never the API or the app", async () => {
    const seenBefore = app.seen.length;
    const { text } = await rawExchange(
      daemonPort,
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${daemonPort}\r\n\r\nGET /web/console HTTP/1.1\r\nHost: ${host}\r\nX-Hotline-Preview-Token: ${token}\r\n\r\n`,
    );
    expect(statuses(text)).toEqual([200, 421]);
    expect(app.seen.length).toBe(seenBefore);
    // And the other way: the daemon's own host on a preview connection is not served there.
    const other = await rawExchange(daemonPort, `${req("GET", "/x")}GET / HTTP/1.1\r\nHost: 127.0.0.1:${daemonPort}\r\n\r\n`);
    expect(statuses(other.text)).toEqual([200, 421]);
    expect(other.text).not.toContain("hotline: the agent daemon");
  });
});

import { createServer, type Server } from "node:http";
import { chromium, type Browser } from "playwright-core";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { desktopToolsAvailable, XServer } from "../helpers/x-server.js";

const ready = desktopToolsAvailable() && toolAvailable("chromium", ["--version"]);
const COLOUR = [0, 200, 100] as const;

/** How a WebSocket upgrade to `url` ends: "open", or the HTTP status it was refused with. */
function upgradeOutcome(url: string, headers: Record<string, string> = {}): Promise<string | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => {
      ws.close();
      resolve("open");
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("error", () => resolve("error"));
  });
}

describe.skipIf(!ready)("browser.open: Chromium over CDP through the daemon", () => {
  let x: XServer;
  let daemon: TestDaemon;
  let client: TestClient;
  let site: Server;
  let siteUrl = "";
  const browsers: Browser[] = [];

  beforeAll(async () => {
    x = await XServer.start(1280, 800);
    daemon = await TestDaemon.start({ args: ["--display", x.display] });
    client = await daemon.client();
    site = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(`<title>hotline test page</title><body style="margin:0;background:rgb(${COLOUR.join(",")})"><h1>hello</h1></body>`);
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
  });

  afterAll(async () => {
    for (const b of browsers) await b.close().catch(() => undefined);
    await client?.close();
    await daemon?.stop(); // ends the Chromium it started
    daemon?.cleanup();
    await x?.stop();
    site?.close();
  });

  it("connectOverCDP(cdpUrl) drives the desktop's Chromium: it navigates to a local page and reads its title, which the next screenshot shows", async () => {
    const opened = await client.ok("browser.open", {}, 60_000);
    expect(opened.cdpUrl).toMatch(new RegExp(`^${daemon.url}/cdp/hlcdp_[^/]+/devtools/browser/`));
    expect(opened.pages.length).toBeGreaterThanOrEqual(1);
    const browser = await chromium.connectOverCDP(opened.cdpUrl);
    browsers.push(browser);
    const page = browser.contexts()[0]!.pages()[0] ?? (await browser.contexts()[0]!.newPage());
    await page.goto(siteUrl);
    expect(await page.title()).toBe("hotline test page");
    await page.bringToFront();
    const again = await client.ok("browser.open", {}, 60_000);
    expect(again.pid).toBe(opened.pid);
    expect(again.pages).toContainEqual({ url: siteUrl, title: "hotline test page" });

    const shot = await client.ok("desktop.screenshot", { maxWidth: 640 });
    const image = Buffer.from(shot.data, "base64");
    const { execFileSync } = await import("node:child_process");
    const rgb = execFileSync("convert", ["-", "-depth", "8", "rgb:-"], { input: image, maxBuffer: 32 * 1024 * 1024 });
    let matching = 0;
    for (let i = 0; i < rgb.length; i += 3) if (rgb[i] === COLOUR[0] && rgb[i + 1] === COLOUR[1] && rgb[i + 2] === COLOUR[2]) matching++;
    expect(matching / (rgb.length / 3), "share of the screenshot in the page's colour").toBeGreaterThan(0.1);
  });

  it("the http:// form serves /json/version with the relay's WebSocket URL, so connectOverCDP works from it too", async () => {
    const opened = await client.ok("browser.open", { url: `${siteUrl}?tab` }, 60_000);
    expect(opened.pages.map((p: { url: string }) => p.url)).toContain(`${siteUrl}?tab`);
    const httpUrl = opened.cdpUrl.replace(/^ws/, "http").replace(/\/devtools\/.*$/, "");
    const version = (await (await fetch(`${httpUrl}/json/version`)).json()) as { webSocketDebuggerUrl: string; Browser: string };
    expect(version.Browser).toMatch(/Chrom/);
    expect(version.webSocketDebuggerUrl).toBe(opened.cdpUrl);
    const browser = await chromium.connectOverCDP(httpUrl);
    browsers.push(browser);
    const titles = await Promise.all(
      browser
        .contexts()[0]!
        .pages()
        .map((p) => p.title()),
    );
    expect(titles).toContain("hotline test page");
  });

  it("refuses a CDP connection without the token, with another use's token, from a foreign Origin, and once expired or revoked", async () => {
    const opened = await client.ok("browser.open", { ttlMs: 10_000 }, 60_000);
    const path = new URL(opened.cdpUrl).pathname.replace(/^\/cdp\/[^/]+/, "");
    expect(await upgradeOutcome(`${daemon.url}/cdp${path}`)).toBe(401);
    expect(await upgradeOutcome(`${daemon.url}/cdp/${daemon.token}${path}`)).toBe(401);
    expect(await upgradeOutcome(opened.cdpUrl, { Origin: "http://evil.example" })).toBe(403);
    expect(
      (
        await fetch(`${opened.cdpUrl.replace(/^ws/, "http").replace(/\/devtools\/.*$/, "")}/json/version`, {
          headers: { Origin: "http://evil.example" },
        })
      ).status,
    ).toBe(403);
    // An open connection ends with its token: revoked here, expired below.
    const revoked = await client.ok("browser.open", {}, 60_000);
    const ws = new WebSocket(revoked.cdpUrl);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const closed = new Promise((resolve) => ws.once("close", resolve));
    await client.ok("tokens.revoke", { tokenId: revoked.tokenId });
    await closed;
    expect(await upgradeOutcome(revoked.cdpUrl)).toBe(401);
    expect(await upgradeOutcome(opened.cdpUrl)).toBe("open");
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(opened.expiresAt) - Date.now() + 200)));
    expect(await upgradeOutcome(opened.cdpUrl)).toBe(401);
  });
});

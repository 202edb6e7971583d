import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { freePort, portOf } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = toolAvailable("chromium", ["--version"]);
const VITE = new URL("../../node_modules/vite/bin/vite.js", import.meta.url).pathname;

/** A tiny Vite app: index.html, a module that shows a message, and HMR that swaps the message in place. */
function writeApp(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "index.html"),
    '<!doctype html><html><body><h1 id="msg">…</h1><script type="module" src="/main.js"></script></body></html>\n',
  );
  writeFileSync(join(dir, "message.js"), 'export const message = "hello from vite";\n');
  writeFileSync(
    join(dir, "main.js"),
    `import { message } from "./message.js";
const show = (text) => (document.querySelector("#msg").textContent = text);
show(message);
if (import.meta.hot) import.meta.hot.accept("./message.js", (m) => show(m.message));
`,
  );
  writeFileSync(join(dir, "package.json"), '{"name": "preview-app", "private": true, "type": "module"}\n');
}

describe.skipIf(!hasChromium)("previews in Chromium", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let context: BrowserContext;
  let browser: Browser;
  let profile: string;
  let outer: Server;
  let vitePort: number;
  let viteJob: string;
  const appDir = mkdtempSync(join(tmpdir(), "hotline-vite-"));

  beforeAll(async () => {
    daemon = await TestDaemon.start();
    client = await daemon.client();
    writeApp(appDir);
    vitePort = await freePort();
    const started = await client.ok("shell", { command: ["node", VITE, "--port", String(vitePort), "--strictPort"], cwd: appDir });
    viteJob = started.job.id;
    const { chromium } = await import("playwright-core");
    profile = mkdtempSync(join(tmpdir(), "hotline-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    browser = context.browser()!;
    // Another origin that frames a preview (a provider's dashboard, an agent's UI).
    outer = createServer((req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(
        `<!doctype html><iframe id="frame" width="600" height="300" src="${new URL(req.url!, "http://x").searchParams.get("src")}"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => outer.listen(0, "127.0.0.1", resolve));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    outer?.close();
    if (viteJob) await client?.call("jobs.cancel", { job: viteJob });
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    if (profile) rmSync(profile, { recursive: true, force: true });
    rmSync(appDir, { recursive: true, force: true });
  });

  async function text(page: Page, pattern: RegExp): Promise<void> {
    await page.waitForFunction((source) => new RegExp(source).test(document.querySelector("#msg")?.textContent ?? ""), pattern.source, {
      timeout: 30_000,
    });
  }

  it("shows a Vite dev server (default config) and updates it by HMR through the proxy when files.edit changes the source", async () => {
    const waited = await client.ok("ports.wait", { port: vitePort, timeoutMs: 30_000 });
    expect(waited.listening).toBe(true);
    expect(waited.listeners[0].job).toBe(viteJob);
    const link = await client.ok("preview.open", { port: vitePort });
    expect(link.listening).toBe(true);
    const page = await context.newPage();
    const sockets: string[] = [];
    page.on("websocket", (ws) => sockets.push(ws.url()));
    await page.goto(link.url);
    await text(page, /^hello from vite$/);
    // The token left the address bar for a cookie.
    expect(page.url()).toBe(`http://${vitePort}.localhost:${portOf(daemon.url)}/`);
    await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));
    await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(0);
    // The HMR socket went through the preview host (not straight to localhost:<vite port>).
    expect(sockets.every((u) => u.startsWith(`ws://${vitePort}.localhost:${portOf(daemon.url)}/`))).toBe(true);
    expect(sockets[0]).toContain("token=");
    await client.ok("files.edit", { path: join(appDir, "message.js"), edits: [{ old: "hello from vite", new: "edited through HMR" }] });
    await text(page, /^edited through HMR$/);
    // No reload happened: the page's own state survived the update.
    expect(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    await page.close();
  });

  it("loads inside an iframe of another origin (the Partitioned SameSite=None cookie is kept in the frame)", async () => {
    const link = await client.ok("preview.open", { port: vitePort });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${(outer.address() as { port: number }).port}/?src=${encodeURIComponent(link.url)}`);
    const frame = page.frameLocator("#frame");
    await expect.poll(async () => frame.locator("#msg").textContent({ timeout: 30_000 }), { timeout: 30_000 }).toMatch(/HMR|vite/);
    await page.close();
  });

  it("a page opened before the server listens shows the waiting page, then the app without a manual reload", async () => {
    const port = await freePort();
    const link = await client.ok("preview.open", { port });
    expect(link.listening).toBe(false);
    const page = await context.newPage();
    await page.goto(link.url);
    expect(await page.textContent("h1")).toBe(`Waiting for port ${port}`);
    expect(await page.textContent("body")).toContain(`nothing listens on port ${port} in the sandbox yet`);
    const app = await client.ok("shell", {
      command: ["node", "-e", `require("http").createServer((q, s) => s.end('<h1 id="msg">now up</h1>')).listen(${port}, "127.0.0.1")`],
    });
    try {
      await text(page, /^now up$/);
    } finally {
      await client.call("jobs.cancel", { job: app.job.id });
    }
    await page.close();
  });

  it("the console lists the listening ports, and a manage link's preview button gives the port's link", async () => {
    const link = await client.ok("console.open", {});
    const page = await context.newPage();
    await page.goto(link.consoleUrl);
    const row = page.locator("#ports tr", { hasText: String(vitePort) }).first();
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain(viteJob);
    await row.locator("button", { hasText: "preview" }).click();
    const anchor = row.locator("a", { hasText: "open preview" });
    await anchor.waitFor({ timeout: 30_000 });
    expect(await anchor.getAttribute("href")).toMatch(
      new RegExp(`^http://${vitePort}\\.localhost:${portOf(daemon.url)}/\\?hotline_preview_token=hlpv_`),
    );
    await page.close();
  });

  it("a refused link shows a page that says why and how to get a new one", async () => {
    const link = await client.ok("preview.open", { port: vitePort });
    await client.ok("tokens.revoke", { tokenId: link.tokenId });
    const page = await context.newPage();
    const response = await page.goto(link.url);
    expect(response?.status()).toBe(401);
    expect(await page.textContent("body")).toContain("revoked");
    expect(await page.textContent("body")).toContain("preview.open");
    await page.close();
  });
});

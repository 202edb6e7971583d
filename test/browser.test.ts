import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CuttingProxy } from "./helpers/cutting-proxy.js";
import { TestDaemon, type Frame, type TestClient } from "./helpers/daemon.js";
import { toolAvailable } from "./helpers/tools.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = toolAvailable("chromium", ["--version"]);
const SHOTS = new URL("../.tmp/", import.meta.url).pathname;

/** The text of an xterm buffer the page exposes (window.hotline.term), one string per line. */
function bufferText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const term = (
      window as unknown as {
        hotline: {
          term: { buffer: { active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined } } };
        };
      }
    ).hotline.term;
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
    return lines.join("\n");
  });
}

async function waitForText(page: Page, pattern: RegExp, what: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await bufferText(page);
    if (pattern.test(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what} (${pattern}); the terminal shows:\n${text.trimEnd().slice(-2000)}`);
    await page.waitForTimeout(50); // the page's buffer has no event a test can await from outside
  }
}

function tokenOf(link: string): string {
  return new URLSearchParams(new URL(link).hash.slice(1)).get("token")!;
}

/** A slow HTTP server: `size` bytes in 16 KiB pieces, one every 50 ms (a download whose progress moves). */
function slowServer(size: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.writeHead(200, { "Content-Length": size, "Content-Type": "application/octet-stream" });
    let sent = 0;
    const timer = setInterval(() => {
      const piece = Math.min(16 * 1024, size - sent);
      res.write(Buffer.alloc(piece, 97));
      sent += piece;
      if (sent >= size) {
        clearInterval(timer);
        res.end();
      }
    }, 50);
    req.on("close", () => clearInterval(timer));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/file.bin` }),
    ),
  );
}

describe.skipIf(!hasChromium)("web terminal and console in Chromium", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let browser: Browser;
  let context: BrowserContext;
  let profile: string;
  const requested: string[] = [];
  const tokens: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    daemon = await TestDaemon.start({ args: ["--log-level", "debug"] });
    client = await daemon.client();
    const { chromium } = await import("playwright-core");
    profile = mkdtempSync(join(tmpdir(), "hotline-chromium-"));
    const args = [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--host-resolver-rules=MAP rebind.test 127.0.0.1",
    ];
    // launchPersistentContext owns the --user-data-dir: a fresh one per run.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args,
      viewport: { width: 1000, height: 640 },
    });
    browser = context.browser()!;
    context.on("request", (request) => requested.push(request.url()));
    // Chromium reports a blocked resource or inline style as a DOM event; the pages' own CSP must never fire it.
    await context.addInitScript(() =>
      document.addEventListener("securitypolicyviolation", (e) =>
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`),
      ),
    );
    context.on("console", (message) => {
      if (message.text().startsWith("CSP violation")) cspViolations.push(message.text());
    });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  async function terminalLink(params: Frame = {}): Promise<Frame> {
    const link = await client.ok("terminal.open", params);
    tokens.push(tokenOf(link.webTerminalUrl));
    return link;
  }

  async function consoleLink(asker: TestClient = client): Promise<Frame> {
    const link = await asker.ok("console.open", {});
    tokens.push(tokenOf(link.consoleUrl));
    return link;
  }

  it("a terminal link runs what is typed, follows the window size, and survives a dropped socket", async () => {
    const link = await terminalLink({ cwd: daemon.dirs.home });
    const proxy = await CuttingProxy.start(daemon.url);
    const page = await context.newPage();
    try {
      // Through a TCP proxy (like a port forward): its address is the page origin, and it can cut the socket.
      const url = new URL(link.webTerminalUrl);
      url.port = String(proxy.port);
      const response = await page.goto(url.href);
      expect(response!.headers()["content-security-policy"]).toContain("default-src 'self'");
      await page.waitForFunction(() => (window as unknown as { hotline: { connects: number } }).hotline.connects === 1);
      await page.keyboard.type('echo hel""lo-$((6*7))');
      await page.keyboard.press("Enter");
      await waitForText(page, /^hello-42$/m, "hello-42");

      const size = async (): Promise<[number, number]> =>
        page.evaluate(() => {
          const t = (window as unknown as { hotline: { term: { rows: number; cols: number } } }).hotline.term;
          return [t.rows, t.cols] as [number, number];
        });
      const [rows, cols] = await size();
      await page.keyboard.type("stty size\n");
      await waitForText(page, new RegExp(`^${rows} ${cols}$`, "m"), `stty size ${rows} ${cols}`);
      await page.setViewportSize({ width: 640, height: 400 });
      await page.waitForFunction(
        ([r, c]) => {
          const t = (window as unknown as { hotline: { term: { rows: number; cols: number } } }).hotline.term;
          return t.rows !== r && t.cols !== c;
        },
        [rows, cols],
      );
      const [rows2, cols2] = await size();
      await page.keyboard.type("stty size\n");
      await waitForText(page, new RegExp(`^${rows2} ${cols2}$`, "m"), `stty size ${rows2} ${cols2} after the resize`);
      await page.setViewportSize({ width: 1000, height: 640 });
      await page.screenshot({ path: join(SHOTS, "web-terminal.png") });

      proxy.cut();
      await page.waitForFunction(() => (window as unknown as { hotline: { connects: number } }).hotline.connects === 2);
      expect(proxy.accepted).toBeGreaterThanOrEqual(2);
      await page.keyboard.type("echo after-$((40+2))\n");
      const text = await waitForText(page, /^after-42$/m, "after-42 on the new socket");
      expect(text).toMatch(/^hello-42$/m); // the earlier output is still on screen
      expect(text.match(/^hello-42$/gm)).toHaveLength(1); // and not replayed twice
    } finally {
      await page.close();
      await proxy.close();
      await client.ok("jobs.cancel", { job: link.job.id, signal: "SIGHUP", wait: 10_000 }); // an interactive bash ignores SIGTERM
    }
  });

  it("an expired, an altered and a revoked link each show the page that says so and how to get a new one", async () => {
    const page = await context.newPage();
    try {
      const base = new URL(daemon.url.replace(/^ws/, "http"));
      const short = await client.ok("tokens.create", { scope: "manage", ttlMs: 1000 });
      tokens.push(short.token);
      // The token's own deadline: nothing to await but the clock.
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(short.expiresAt) - Date.now()) + 100));
      await page.goto(`${base.origin}/web/console#token=${short.token}`);
      await page.waitForSelector("#link-refused");
      expect(await page.textContent("#link-refused")).toMatch(/no longer works[\s\S]*expired[\s\S]*hotline console/);
      await page.screenshot({ path: join(SHOTS, "web-link-refused.png") });

      const link = await terminalLink();
      const tampered = link.webTerminalUrl.replace(/token=hl_(.)/, (_m: string, c: string) => `token=hl_${c === "A" ? "B" : "A"}`);
      await page.goto("about:blank");
      await page.goto(tampered);
      await page.waitForSelector("#link-refused");
      expect(await page.textContent("#link-refused")).toMatch(/not valid[\s\S]*hotline terminal --url/);

      await page.goto("about:blank");
      await page.goto(link.webTerminalUrl);
      await page.waitForFunction(() => (window as unknown as { hotline: { connects: number } }).hotline.connects === 1);
      await client.ok("tokens.revoke", { tokenId: link.tokenId });
      await page.waitForSelector("#link-refused");
      expect(await page.textContent("#link-refused")).toContain("revoked");
      await client.ok("jobs.cancel", { job: link.job.id, signal: "SIGHUP", wait: 10_000 }); // an interactive bash ignores SIGTERM
    } finally {
      await page.close();
    }
  });

  it("an observe console link shows a running job's output live, and the daemon refuses its typing and cancel", async () => {
    const { token: observeToken } = await client.ok("tokens.create", { scope: "observe" });
    tokens.push(observeToken);
    const observer = await daemon.client({}, observeToken);
    const link = await consoleLink(observer);
    expect(link.scope).toBe("observe");
    const { job } = await client.ok("shell", {
      command: "for i in $(seq 1 600); do printf '\\033[32mtick-%d\\033[0m\\n' $i; sleep 0.05; done",
    });
    const page = await context.newPage();
    try {
      await page.goto(link.consoleUrl);
      await page.click(`tr[data-job="${job.id}"]`);
      const first = await waitForText(page, /tick-\d+/, "the job's output");
      const seen = Math.max(...[...first.matchAll(/tick-(\d+)/g)].map((m) => Number(m[1])));
      await waitForText(page, new RegExp(`tick-${seen + 5}\\b`), "more output, live");
      expect(await page.isHidden("#cancel")).toBe(true);
      // Hidden is not enough: the daemon itself refuses what an observe link's socket asks.
      const refused = await page.evaluate(async (id) => {
        const conn = (window as unknown as { hotline: { conn: { request(a: string, p: object): Promise<unknown> } } }).hotline.conn;
        const codeOf = (p: Promise<unknown>) =>
          p.then(
            () => "ok",
            (e: { code: string }) => e.code,
          );
        return [await codeOf(conn.request("jobs.input", { job: id, data: "x" })), await codeOf(conn.request("jobs.cancel", { job: id }))];
      }, job.id);
      expect(refused).toEqual(["forbidden", "forbidden"]);
      // "copy output" puts the whole output so far (every page of jobs.output) on the clipboard.
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(link.consoleUrl).origin });
      await page.click("#copy");
      await page.waitForFunction(() => /^copied \d+ characters/.test(document.getElementById("status")!.textContent ?? ""));
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toMatch(/^\x1b\[32mtick-1\x1b\[0m\n\x1b\[32mtick-2\x1b\[0m\n/);
      await page.screenshot({ path: join(SHOTS, "web-console.png") });

      // The observe token on the terminal page: what is typed is refused by the daemon.
      const terminal = await terminalLink({ command: "cat" });
      await page.goto(`${new URL(terminal.webTerminalUrl).origin}/web/terminal#job=${terminal.job.id}&token=${tokenOf(link.consoleUrl)}`);
      await page.waitForFunction(() => (window as unknown as { hotline: { connects: number } }).hotline.connects === 1);
      await page.keyboard.type("typed-by-observer");
      await page.waitForFunction(() => /input refused: forbidden/.test(document.getElementById("status")!.textContent ?? ""));
      const status = await client.ok("jobs.status", { job: terminal.job.id });
      expect(status.outputBytes).toBe(0);
      await client.ok("jobs.cancel", { job: terminal.job.id, wait: 10_000 });
      expect((await client.ok("jobs.status", { job: job.id })).state).toBe("running");
    } finally {
      await page.close();
      await observer.close();
      await client.ok("jobs.cancel", { job: job.id, wait: 10_000 });
    }
  });

  it("the console lists a new job as it starts, moves a download's progress bar, and its cancel leaves the job cancelled", async () => {
    const link = await consoleLink();
    const page = await context.newPage();
    const slow = await slowServer(1024 * 1024);
    try {
      await page.goto(link.consoleUrl);
      await page.waitForFunction(() => /live/.test(document.getElementById("status")!.textContent ?? ""));
      const asked = Date.now();
      const { job } = await client.ok("shell", { command: "sleep 120" });
      // Listed as it started, without a reload. The second is the measured line, not asserted:
      // on a loaded machine a wall-clock bound measures the machine.
      await page.waitForSelector(`tr[data-job="${job.id}"][data-state="running"]`, { timeout: 30_000 });
      console.log(`[measure] console listed a new job in ${Date.now() - asked} ms`);

      const dest = join(daemon.dirs.home, "file.bin");
      const { job: download } = await client.ok("files.download", { url: slow.url, dest });
      const bar = `tr[data-job="${download.id}"] progress`;
      const progressValue = (): Promise<number> => page.$eval(bar, (el) => (el as HTMLProgressElement).value);
      await page.waitForFunction((sel) => ((document.querySelector(sel) as HTMLProgressElement | null)?.value ?? 0) > 0, bar);
      const early = await progressValue();
      await page.waitForFunction(
        ([sel, v]) => ((document.querySelector(sel as string) as HTMLProgressElement).value ?? 0) > (v as number),
        [bar, early] as const,
      );
      expect(await progressValue()).toBeGreaterThan(early);
      await page.waitForSelector(`tr[data-job="${download.id}"][data-state="succeeded"]`, { timeout: 30_000 });
      expect(await page.$eval(bar, (el) => [(el as HTMLProgressElement).value, (el as HTMLProgressElement).max])).toEqual([
        1024 * 1024,
        1024 * 1024,
      ]);

      await page.click(`tr[data-job="${job.id}"]`);
      await page.click("#cancel");
      await page.waitForSelector(`tr[data-job="${job.id}"][data-state="cancelled"]`);
      expect((await client.ok("jobs.status", { job: job.id })).state).toBe("cancelled");
      await page.screenshot({ path: join(SHOTS, "web-console-jobs.png") });
    } finally {
      await page.close();
      slow.server.close();
    }
  });

  it("refuses a page under a foreign Host (DNS rebinding), and a foreign page's socket", async () => {
    const link = await consoleLink();
    const port = new URL(daemon.url).port;
    const page = await context.newPage();
    try {
      const response = await page.goto(`http://rebind.test:${port}/web/console#token=${tokenOf(link.consoleUrl)}`);
      expect(response!.status()).toBe(403);
      expect(await page.textContent("body")).toContain("allowedHosts");
      // A page of another origin on this machine cannot open the socket, even with a valid link token.
      const other = createServer((_req, res) =>
        res.writeHead(200, { "Content-Type": "text/html" }).end("<!doctype html><title>another page</title>"),
      );
      await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", () => resolve()));
      const otherOrigin = `http://localhost:${(other.address() as { port: number }).port}`;
      await page.goto(`${otherOrigin}/`);
      const outcome = await page.evaluate(
        ([url, token]) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(url, ["hotline", `hotline.token.${token}`]);
            ws.onopen = () => resolve("open");
            ws.onclose = () => resolve("refused");
          }),
        [daemon.url, tokenOf(link.consoleUrl)] as const,
      );
      other.close();
      expect(outcome).toBe("refused");
      // The daemon's log line arrives over a pipe, after the browser already saw the refusal.
      for (let i = 0; i < 100 && !daemon.logLines.some((l) => l.includes("upgrade refused") && l.includes(otherOrigin)); i++)
        await page.waitForTimeout(50);
      expect(daemon.logLines.some((l) => l.includes("upgrade refused") && l.includes(otherOrigin))).toBe(true);
    } finally {
      await page.close();
    }
  });

  it("no link token appears in a URL the browser requested or in a daemon log line, and no CSP violation occurred", () => {
    expect(cspViolations).toEqual([]);
    expect(tokens.length).toBeGreaterThan(4);
    expect(requested.length).toBeGreaterThan(10);
    // What goes on the wire is the URL without its fragment.
    const sent = requested.map((u) => u.split("#")[0]!);
    for (const token of tokens) {
      expect(sent.filter((u) => u.includes(token))).toEqual([]);
      expect(daemon.logLines.filter((l) => l.includes(token))).toEqual([]);
    }
  });
});

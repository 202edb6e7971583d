import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { desktopToolsAvailable, Recorder, XServer } from "../helpers/x-server.js";

const ready = desktopToolsAvailable() && toolAvailable("chromium", ["--version"]);
const WINDOW = { x: 100, y: 100, width: 400, height: 320 };
const BUTTON = { x: WINDOW.x + 200, y: WINDOW.y + 80 };
const ENTRY = { x: WINDOW.x + 200, y: WINDOW.y + 240 };

/** The remote screen as the page's noVNC canvas holds it, sampled at screen point (x, y). */
async function canvasPixel(page: Page, x: number, y: number): Promise<[number, number, number]> {
  return page.evaluate(
    ([px, py]) => {
      const canvas = document.querySelector("#screen canvas") as HTMLCanvasElement;
      const d = canvas.getContext("2d")!.getImageData(px!, py!, 1, 1).data;
      return [d[0]!, d[1]!, d[2]!] as [number, number, number];
    },
    [x, y],
  );
}

/** Clicks the page where screen point (x, y) is shown (the canvas is scaled to the window). */
async function clickScreenPoint(page: Page, x: number, y: number): Promise<void> {
  const box = await page.evaluate(() => {
    const canvas = document.querySelector("#screen canvas") as HTMLCanvasElement;
    const r = canvas.getBoundingClientRect();
    return { left: r.left, top: r.top, sx: r.width / canvas.width, sy: r.height / canvas.height };
  });
  await page.mouse.click(box.left + x * box.sx, box.top + y * box.sy);
}

describe.skipIf(!ready)("desktop.open: the desktop in a browser through the daemon", () => {
  let x: XServer;
  let daemon: TestDaemon;
  let client: TestClient;
  let browser: Browser;
  let recorder: Recorder;

  beforeAll(async () => {
    x = await XServer.start(1024, 768);
    daemon = await TestDaemon.start({ args: ["--display", x.display] });
    client = await daemon.client();
    recorder = await Recorder.start(x, join(daemon.dirs.root, "events.jsonl"), WINDOW, "#ff0000");
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  });

  afterAll(async () => {
    await browser?.close();
    recorder?.stop();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    await x?.stop();
  });

  async function openDesktop(scope: "manage" | "observe"): Promise<Page> {
    let asker = client;
    if (scope === "observe") {
      const { token } = await client.ok("tokens.create", { scope: "observe" });
      asker = await daemon.client({}, token);
    }
    const link = await asker.ok("desktop.open");
    expect(link).toMatchObject({ available: true, scope });
    expect(link.desktopUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/web\/desktop#token=/);
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(link.desktopUrl);
    await page.waitForFunction(
      () => {
        const canvas = document.querySelector("#screen canvas") as HTMLCanvasElement | null;
        if (!canvas || canvas.width < 100) return false;
        const d = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 0; i < d.length; i += 4) if (d[i]! > 200 && d[i + 1]! < 50) return true; // the red window has arrived
        return false;
      },
      undefined,
      { timeout: 30_000 },
    );
    if (asker !== client) await asker.close();
    return page;
  }

  it("shows the desktop: the canvas is not blank and matches a screenshot taken at the same time", async () => {
    const page = await openDesktop("manage");
    const shot = await client.ok("desktop.screenshot");
    const rgb = execFileSync("convert", ["-", "-depth", "8", "rgb:-"], {
      input: Buffer.from(shot.data, "base64"),
      maxBuffer: 32 * 1024 * 1024,
    });
    const size = await page.evaluate(() => {
      const c = document.querySelector("#screen canvas") as HTMLCanvasElement;
      return [c.width, c.height];
    });
    expect(size).toEqual([1024, 768]);
    let compared = 0;
    for (let y = 20; y < 768; y += 97) {
      for (let px = 20; px < 1024; px += 113) {
        const i = (y * 1024 + px) * 3;
        const seen = await canvasPixel(page, px, y);
        for (let c = 0; c < 3; c++) expect(Math.abs(seen[c]! - rgb[i + c]!), `channel ${c} at ${px},${y}`).toBeLessThanOrEqual(12);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(50);
    expect(await canvasPixel(page, BUTTON.x, BUTTON.y)).toEqual([255, 0, 0]);
    await page.close();
  });

  it("a click in a manage link's page reaches the X server", async () => {
    const page = await openDesktop("manage");
    const presses = recorder.events().filter((e) => e.event === "button").length;
    await clickScreenPoint(page, BUTTON.x, BUTTON.y);
    await recorder.waitFor(
      () => recorder.events().filter((e) => e.event === "button").length > presses,
      "the button pressed from the page",
    );
    await page.close();
  });

  it("an observe link's page views only: its input is dropped by the daemon, even when the page sends it", async () => {
    const page = await openDesktop("observe");
    expect(await page.evaluate(() => (window as unknown as { hotline: { rfb: { viewOnly: boolean } } }).hotline.rfb.viewOnly)).toBe(true);
    // A tampered page: noVNC sends pointer and key events again; the daemon must still drop them.
    await page.evaluate(() => ((window as unknown as { hotline: { rfb: { viewOnly: boolean } } }).hotline.rfb.viewOnly = false));
    const before = recorder.events().length;
    await clickScreenPoint(page, BUTTON.x, BUTTON.y);
    await page.keyboard.type("zz");
    // A click through the API afterwards: once it is recorded, the page's earlier click would have been too.
    await client.ok("desktop.act", { do: "left_click", coordinate: [ENTRY.x, ENTRY.y], scaledTo: { width: 1024, height: 768 } });
    await recorder.waitFor((e) => e.event === "click" && e.y === ENTRY.y, "the API's click");
    const after = recorder.events().slice(before);
    expect(after.filter((e) => e.event === "button" || e.event === "text" || (e.event === "click" && e.y === BUTTON.y))).toEqual([]);
    // The page still shows the screen: the relay kept the stream.
    expect(await canvasPixel(page, BUTTON.x, BUTTON.y)).toEqual([255, 0, 0]);
    await page.close();
  });
});

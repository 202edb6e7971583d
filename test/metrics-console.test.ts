import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type Frame, TestDaemon, type TestClient } from "./helpers/daemon.js";
import { toolAvailable } from "./helpers/tools.js";
import { busyPython } from "./helpers/busy-python.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = toolAvailable("chromium", ["--version"]);
const SHOTS = new URL("../.tmp/", import.meta.url).pathname;

const BUSY = busyPython(100_000_000);

interface Panel {
  points: Record<string, number>;
  labels: Record<string, string>;
  lines: Record<string, string>;
  cpu: string;
  memory: string;
  samples: number;
}

/** What the panel shows now: each sparkline's point count, label and drawn line, and the job row's CPU and memory cells. */
function panelOf(page: Page, job: string): Promise<Panel> {
  return page.evaluate((id) => {
    const out: Panel = { points: {}, labels: {}, lines: {}, cpu: "", memory: "", samples: 0 };
    for (const name of ["cpu", "memory", "disk"]) {
      const figure = document.getElementById(`spark-${name}`)!;
      out.points[name] = Number(figure.dataset.points ?? 0);
      out.labels[name] = figure.querySelector(".value")?.textContent ?? "";
      out.lines[name] = figure.querySelector("polyline")?.getAttribute("points") ?? "";
    }
    const row = document.querySelector(`tr[data-job="${id}"]`);
    out.cpu = row?.querySelector("td.cpu")?.textContent ?? "";
    out.memory = row?.querySelector("td.memory")?.textContent ?? "";
    out.samples = (window as unknown as { hotline: { samples: unknown[] } }).hotline.samples.length;
    return out;
  }, job);
}

async function panelUntil(page: Page, job: string, ok: (p: Panel) => boolean, what: string): Promise<Panel> {
  let last: Panel | undefined;
  for (let i = 0; i < 300; i++) {
    last = await panelOf(page, job);
    if (ok(last)) return last;
    await page.waitForTimeout(100); // the panel redraws on its own timers; nothing to await from outside
  }
  throw new Error(`the console never showed ${what}; it shows ${JSON.stringify(last)}`);
}

describe.skipIf(!hasChromium)("the console's metrics panel in Chromium", { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    daemon = await TestDaemon.start({ args: ["--metrics-interval-ms", "500"] });
    client = await daemon.client();
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  });

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("draws CPU, memory and disk over the window and each job's CPU and memory, and keeps them moving", async () => {
    const { job } = await client.ok("shell", { command: ["python3", "-c", BUSY], stdin: true });
    onTestFinished(async () => void (await client.call("jobs.cancel", { job: job.id, graceMs: 0 }).catch(() => undefined)));
    const page = await browser.newPage({ viewport: { width: 1100, height: 520 } });
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    // The browser's own favicon.ico request is answered 426 by the daemon: not the page's error.
    page.on("console", (m) => m.type() === "error" && !m.location().url.endsWith("/favicon.ico") && errors.push(m.text()));
    const link: Frame = await client.ok("console.open", {});
    await page.goto(link.consoleUrl);
    const first = await panelUntil(
      page,
      job.id,
      (p) => p.points.cpu >= 3 && /MiB|GiB/.test(p.memory) && /\d+\.\d s · \d+%/.test(p.cpu),
      "three samples and the job's CPU share and memory",
    );
    expect(first.labels.cpu).toMatch(/^\d+% of [\d.]+ cores$/);
    expect(first.labels.memory).toMatch(/^[\d.]+ [KMGT]?i?B of [\d.]+ [KMGT]?i?B \(\+[\d.]+ [KMGT]?i?B cache\)$/);
    expect(first.labels.disk).toMatch(/^\d+% of [\d.]+ [KMGT]?i?B \((home|state|nix)\)$/);
    for (const name of ["cpu", "memory", "disk"]) expect(first.lines[name]!.split(" ").length).toBe(first.points[name]);
    expect(await page.isVisible("#metrics-panel")).toBe(true);
    await page.screenshot({ path: `${SHOTS}web-console-metrics.png` });
    // It updates: new samples are drawn, and the running job's CPU time moves on.
    const later = await panelUntil(
      page,
      job.id,
      (p) => p.samples > first.samples + 1 && p.cpu !== first.cpu,
      "new samples and a new CPU figure for the job",
    );
    expect(later.points.cpu).toBeGreaterThan(first.points.cpu);
    expect(Number.parseFloat(later.cpu)).toBeGreaterThan(Number.parseFloat(first.cpu));
    // Once the job ends its row says its peak.
    await client.ok("jobs.input", { job: job.id, eof: true });
    await client.ok("jobs.wait", { job: job.id, timeoutMs: 30_000 });
    const ended = await panelUntil(page, job.id, (p) => p.memory.startsWith("peak "), "the job's peak");
    expect(ended.memory).toMatch(/^peak (9\d|1\d\d) MiB$/);
    expect(errors).toEqual([]);
    await page.close();
  });
});

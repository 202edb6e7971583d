import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { pythonUsable, run } from "./helpers.js";

const hasChromium = toolAvailable("chromium", ["--version"]);

describe.skipIf(!hasChromium || !pythonUsable())("the console shows a code run's figures", () => {
  const t = useDaemon();
  let context: BrowserContext;
  let profile: string;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    const { chromium } = await import("playwright-core");
    profile = mkdtempSync(join(tmpdir(), "hotline-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update"],
      viewport: { width: 1000, height: 800 },
    });
    await context.addInitScript(() =>
      document.addEventListener("securitypolicyviolation", (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`)),
    );
    context.on("console", (message) => {
      if (message.text().startsWith("CSP violation")) cspViolations.push(message.text());
    });
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("draws the run's PNG figures, inline and kept as files, at their pixel size, under the pages' CSP", async () => {
    const small = await run(t.client, "import matplotlib.pyplot as plt\nplt.figure(figsize=(3, 2), dpi=50)\nplt.plot([0, 2, 1])\nNone");
    const big = await run(
      t.client,
      "import numpy as np\nplt.figure(figsize=(6, 4), dpi=100)\nplt.imshow(np.random.default_rng(3).random((200, 300, 3)))\nNone",
    );
    expect(big.result.outputs[0].files["image/png"]).toBeDefined();
    const { consoleUrl } = await t.client.ok("console.open", {});
    const page = await context.newPage();
    try {
      await page.goto(consoleUrl);
      await page.waitForFunction(() => /live/.test(document.getElementById("status")!.textContent ?? ""));
      const sizes = async (job: string) => {
        await page.click(`tr[data-job="${job}"]`);
        await page.waitForSelector(`#figures[data-job="${job}"] canvas`);
        return page.$$eval("#figures canvas", (canvases) =>
          canvases.map((c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]),
        );
      };
      expect(await sizes(small.job.id)).toEqual([[150, 100]]);
      expect(await sizes(big.job.id)).toEqual([[600, 400]]);
      // A drawn figure is not blank: the middle of the random image has colour.
      const pixel = await page.$eval("#figures canvas", (c) => [
        ...(c as HTMLCanvasElement).getContext("2d")!.getImageData(300, 200, 1, 1).data,
      ]);
      expect(pixel[3]).toBe(255);
      expect(cspViolations).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

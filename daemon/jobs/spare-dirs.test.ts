import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { SpareDirs } from "./spare-dirs.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function pool(): { spares: SpareDirs; root: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "hotline-spares-"));
  dirs.push(dir);
  const root = join(dir, ".spare");
  return { spares: new SpareDirs(root, ["out.log", "index"], pino({ level: "silent" })), root, dir };
}
const turns = (n: number) => new Promise((resolve) => setTimeout(resolve, n));

// A job manager's shutdown stops the refill: a test or a daemon that removes its state directory
// right after must not meet a spare being made (CI saw ENOTEMPTY from such a removal).
describe("SpareDirs.stop", () => {
  it("stops the refill with nothing made after it, mid-refill or before the pool was read", async () => {
    for (const early of [false, true]) {
      const { spares, root, dir } = pool();
      const started = spares.start();
      if (!early) {
        await started;
        for (let i = 0; i < 20; i++) spares.materialize(join(dir, `job-${i}`)); // each starts a refill
      }
      await spares.stop();
      rmSync(root, { recursive: true }); // no retries: nothing may be writing into it
      await turns(100);
      expect(existsSync(root), early ? "stopped before the pool was read" : "stopped mid-refill").toBe(false);
    }
  });

  it("still makes a job's directory after the stop, by mkdir, with the files a log opens", async () => {
    const { spares, dir } = pool();
    await spares.start();
    await spares.stop();
    spares.materialize(join(dir, "late"));
    expect(readdirSync(join(dir, "late")).sort()).toEqual(["index", "out.log"]);
  });
});

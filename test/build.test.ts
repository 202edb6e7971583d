import { describe, expect, it, onTestFinished } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { TestDaemon } from "./helpers/daemon.js";

const ROOT = new URL("../", import.meta.url).pathname;

describe("building while a daemon of this checkout runs", () => {
  it("a second npm start refuses to rebuild dist/ under the running daemon, and leaves it untouched", async () => {
    const daemon = await TestDaemon.start();
    onTestFinished(async () => {
      await daemon.stop();
      daemon.cleanup();
    });
    const files = ["dist/daemon/main.js", "dist/cli/main.js", "dist/build-info.json", "dist/guide/guide.md"].map((f) => join(ROOT, f));
    const before = files.map((f) => ({ mtime: statSync(f).mtimeMs, ino: statSync(f).ino, text: readFileSync(f, "utf8") }));

    // --idle-exit: should the build not refuse, the second daemon it starts goes away by itself.
    const run = spawnSync("npm", ["start", "--", "--port", "0", "--idle-exit", "1"], {
      cwd: ROOT,
      env: daemon.cliEnv,
      encoding: "utf8",
      timeout: 120_000,
    });

    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(`refusing to replace dist/ under the running daemon of this checkout (pid ${daemon.proc.pid}`);
    const after = files.map((f) => ({ mtime: statSync(f).mtimeMs, ino: statSync(f).ino, text: readFileSync(f, "utf8") }));
    expect(after).toEqual(before);
    // The first daemon still answers.
    const client = await daemon.client();
    expect((await client.ok("state.info")).pid).toBe(daemon.proc.pid);
    await client.close();
  });
});

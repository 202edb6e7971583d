import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { pythonUsable, resultText, run } from "./helpers.js";

/** A stand-in nixpkgs (a path flake, offline) whose python3 and python3Packages.hotline_probe a workspace can prepare. */
const FLAKE = new URL("./fixtures/nixpkgs-python", import.meta.url).pathname;
const hasNix = toolAvailable("nix");

const scratch = mkdtempSync(join(tmpdir(), "hotline-code-ws-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!hasNix || !pythonUsable())("a code context in a prepared workspace", () => {
  const t = useDaemon({ env: { HOTLINE_NIXPKGS: `path:${FLAKE}` } });

  it("runs the workspace's python3 and imports its packages; outside it, the image's python3", async () => {
    const workspace = join(scratch, "project");
    mkdirSync(workspace);
    const prepared = await t.client.ok(
      "prepare",
      { workspace, packages: ["python3", "python3Packages.hotline_probe"], wait: 120_000 },
      130_000,
    );
    const job = prepared.job ? (await t.client.ok("jobs.wait", { job: prepared.job.id, timeoutMs: 120_000 }, 130_000)).job : undefined;
    expect(prepared.ready || job?.state === "succeeded", JSON.stringify(job)).toBe(true);

    const inside = (await t.client.ok("code.context.create", { language: "python", cwd: workspace })).context;
    expect(inside.interpreter).toMatch(/^\/nix\/store\/[^/]+-python3-standin\/bin\/python3$/);
    const probe = await run(t.client, "import hotline_probe, sys\nhotline_probe.WHERE, sys.executable", { context: inside.id });
    expect(resultText(probe)).toBe(`('the prepared workspace', '${inside.interpreter}')`);

    const outside = (await t.client.ok("code.context.create", { language: "python", cwd: scratch })).context;
    expect(outside.interpreter).toBe("/usr/bin/python3");
    expect((await run(t.client, "import hotline_probe", { context: outside.id })).result.error).toMatchObject({
      name: "ModuleNotFoundError",
    });
  });
});

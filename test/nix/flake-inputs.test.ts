import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { flakeInputPaths, inputsRootDir, rootFlakeInputs } from "../../daemon/nix/flake-inputs.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, nixCli, recordingContext, tempDir } from "./helpers.js";

const hasNix = toolAvailable("nix");

/** The store paths each root link under the inputs directory points at. */
function rootedPaths(root: string): string[] {
  const dir = inputsRootDir(root);
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isSymbolicLink())
    .map((e) => readlinkSync(join(e.parentPath, e.name)));
}

describe.skipIf(!hasNix)("flake input GC roots (real nix-store)", () => {
  const dir = tempDir("inputs");
  afterAll(() => cleanup(dir));

  it("a failing nix-store keeps the previous roots; a later success replaces them", async () => {
    const add = (name: string) => {
      writeFileSync(join(dir, name), `${name}\n`);
      return execFileSync("nix-store", ["--add", join(dir, name)], { encoding: "utf8" }).trim();
    };
    const first = add("first-input");
    const root = join(dir, "gcroots", "env");
    await rootFlakeInputs(recordingContext().ctx, root, [first], undefined);
    expect(rootedPaths(root)).toEqual([first]);

    const missing = `${first.slice(0, first.lastIndexOf("/") + 1)}${"0".repeat(32)}-not-there`;
    await expect(rootFlakeInputs(recordingContext().ctx, root, [missing], undefined)).rejects.toThrow();
    expect(rootedPaths(root)).toEqual([first]);

    const second = add("second-input");
    await rootFlakeInputs(recordingContext().ctx, root, [second], undefined);
    expect(rootedPaths(root)).toEqual([second]);
  });

  it("lists a flake's inputs and fetches back one the store lost (an eval-cache hit reads no input)", async () => {
    const input = join(dir, "input");
    const top = join(dir, "top");
    mkdirSync(input);
    mkdirSync(top);
    writeFileSync(join(input, "flake.nix"), `{ outputs = _: { marker = "${process.pid}-${Date.now()}"; }; }\n`);
    writeFileSync(join(top, "flake.nix"), `{ inputs.dep.url = "path:${input}"; outputs = { dep, ... }: { inherit (dep) marker; }; }\n`);
    nixCli(["flake", "lock", `path:${top}`], { stdio: ["ignore", "pipe", "ignore"] });
    const ctx = recordingContext();
    const paths = await flakeInputPaths(ctx.ctx, `path:${top}`, [], undefined);
    expect(paths, ctx.output()).toHaveLength(2);
    const lost = paths[1]!;
    expect(spawnSync("nix-store", ["--delete", lost], { stdio: "ignore" }).status).toBe(0);
    expect(existsSync(lost)).toBe(false);

    const again = recordingContext();
    expect(await flakeInputPaths(again.ctx, `path:${top}`, [], undefined), again.output()).toEqual(paths);
    expect(existsSync(lost), `${lost} was listed but not fetched back`).toBe(true);
  });
});

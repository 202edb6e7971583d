import { execFileSync } from "node:child_process";
import { readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inputsRootDir, rootFlakeInputs } from "../../daemon/nix/flake-inputs.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, recordingContext, tempDir } from "./helpers.js";

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
});

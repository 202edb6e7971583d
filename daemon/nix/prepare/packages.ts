import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RunContext } from "../../runners/context.js";
import { arrivalOf, type Publication } from "../binary-cache.js";
import { cacheKey } from "../cache.js";
import { readWorkspaceFile, writeFileIfChanged } from "../files.js";
import { lockBelongsTo } from "../flake-lock.js";
import { readLockedInput } from "../pin.js";
import { packagesRecipe, type Recipe } from "../recipe.js";
import { workspacePaths } from "../spec.js";
import { renderPackagesFlake } from "../template.js";
import { captureEnvironment } from "./capture.js";
import { evaluate } from "./evaluate.js";
import { publishEnvironment } from "./publish.js";
import { recordEnvironment } from "./record.js";
import type { PrepareOutcome, PrepareParts } from "./types.js";

/**
 * A package list's preparation: write the flake (in a staged copy: the workspace's flake and lock
 * change only after success), evaluate and build it unless the cache has its pin already, capture,
 * publish, then copy the flake and lock into the workspace and record it.
 */
export async function preparePackages(
  parts: PrepareParts,
  workspace: string,
  recipe: Extract<Recipe, { kind: "packages" }>,
  ctx: RunContext,
): Promise<PrepareOutcome> {
  const { settings } = parts;
  const paths = workspacePaths(workspace);
  mkdirSync(paths.hotline, { recursive: true });
  const staging = mkdtempSync(join(paths.hotline, ".staging-"));
  try {
    // Write the flake.
    writeFileIfChanged(join(staging, "flake.nix"), renderPackagesFlake(recipe.pin.url, recipe.packages));
    // Copied through a read that refuses a FIFO (copyFileSync's open would block the daemon on one).
    const reusedLock = lockBelongsTo(paths.lock, recipe.pin.url) ? readWorkspaceFile(paths.lock) : undefined;
    const lockReusable = reusedLock !== undefined;
    if (reusedLock) writeFileIfChanged(join(staging, "flake.lock"), reusedLock);
    let pin = recipe.pin;
    if (lockReusable) pin = { ...pin, ...readLockedInput(paths.lock) };
    let entry = pin.narHash
      ? parts.cache.lookup(settings.system, cacheKey(packagesRecipe(recipe.packages, pin), settings.system))
      : undefined;
    let closure = arrivalOf(0, 0);
    let publication: Publication | undefined;
    if (entry) {
      ctx.output("stderr", `using cached environment ${entry.meta.key}\n`);
    } else {
      // Evaluate and build, capture, publish.
      const flakeRef = `path:${staging}`;
      const args = [
        "print-dev-env",
        "--json",
        ...parts.profiles.args(workspace),
        ...(lockReusable ? ["--no-update-lock-file"] : []),
        flakeRef,
      ];
      const { json, progress } = await evaluate(settings, args, workspace, ctx, recipe.packages);
      closure = arrivalOf(progress.builds.done, progress.substitutions.done);
      pin = { ...recipe.pin, ...readLockedInput(join(staging, "flake.lock")) };
      const recipeData = packagesRecipe(recipe.packages, pin);
      const captured = await captureEnvironment(json, workspace, ctx, settings.hookTimeoutMs);
      ({ entry, publication } = await publishEnvironment(
        parts,
        workspace,
        captured,
        { recipe: recipeData, key: cacheKey(recipeData, settings.system), files: undefined, flakeRef },
        ctx,
      ));
    }
    // Record.
    writeFileIfChanged(paths.flake, readFileSync(join(staging, "flake.nix"), "utf8"));
    writeFileIfChanged(paths.lock, readFileSync(join(staging, "flake.lock"), "utf8"));
    const environment = recordEnvironment(parts, workspace, { ...recipe, pin }, entry, undefined);
    return { environment, closure, ...(publication ? { publication } : {}) };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

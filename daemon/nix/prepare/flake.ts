import { join, relative, sep } from "node:path";
import { ActionError } from "../../../protocol/errors.js";
import type { RunContext } from "../../runners/context.js";
import { arrivalOf } from "../binary-cache.js";
import { cacheKey } from "../cache.js";
import { evaluatedWorkspaceFiles } from "../evaluated-files.js";
import { readWorkspaceFile } from "../files.js";
import { fingerprintFiles } from "../fingerprint.js";
import { restoreLock } from "../flake-lock.js";
import { readLockedInput } from "../pin.js";
import { parseFlakeRef, type Recipe } from "../recipe.js";
import { workspacePaths } from "../spec.js";
import { captureEnvironment } from "./capture.js";
import { type Evaluation, evaluate } from "./evaluate.js";
import { publishEnvironment } from "./publish.js";
import { recordEnvironment } from "./record.js";
import type { PrepareOutcome, PrepareParts } from "./types.js";

/**
 * A repository flake's preparation: evaluate and build it (its lock restored when that fails, and
 * never updated silently), fingerprint the files it read, capture, publish, record.
 */
export async function prepareFlake(
  parts: PrepareParts,
  workspace: string,
  recipe: Extract<Recipe, { kind: "flake" }>,
  ctx: RunContext,
): Promise<PrepareOutcome> {
  const { dir, attr } = parseFlakeRef(workspace, recipe.ref);
  const lockPath = join(dir, "flake.lock");
  const lockBefore = readWorkspaceFile(lockPath) ?? null;
  const generated = dir === workspacePaths(workspace).flakeDir || dir.startsWith(workspacePaths(workspace).hotline + sep);
  const flakeRef = `${generated ? "path:" : ""}${dir}`;
  const installable = `${flakeRef}${attr ? `#${attr}` : ""}`;
  const before = fingerprintFiles([join(dir, "flake.nix"), lockPath]);
  const args = [
    "print-dev-env",
    "--json",
    "-v",
    ...parts.profiles.args(workspace),
    ...(lockBefore && !recipe.updateLock ? ["--no-update-lock-file"] : []),
    installable,
  ];
  let result: Evaluation;
  try {
    result = await evaluate(parts.settings, args, workspace, ctx, undefined);
  } catch (err) {
    restoreLock(lockPath, lockBefore);
    if (err instanceof ActionError && /requires lock file changes/.test(err.message)) {
      throw new ActionError(
        "conflict",
        `flake.lock of ${recipe.ref} is out of date and is never updated silently; pass updateLock: true to let Nix update it`,
        {
          path: "/updateLock",
          details: { nix: err.message },
        },
      );
    }
    throw err;
  }
  const files = evaluatedWorkspaceFiles(result.evaluated, dir, workspace);
  const prints = fingerprintFiles([join(dir, "flake.nix"), lockPath, ...files]);
  // An edit made while Nix evaluated must not be trusted as what the environment came from.
  for (const b of before) {
    const now = prints.find((p) => p.path === b.path);
    if (now && now.sha256 !== b.sha256 && !(b.path === lockPath && recipe.updateLock) && !(b.path === lockPath && !lockBefore))
      now.mtimeNs = "-1";
  }
  const locked = readLockedInput(lockPath);
  const recipeData = {
    kind: "flake",
    ref: recipe.ref,
    files: prints.map((p) => ({ path: relative(workspace, p.path), sha256: p.sha256 })),
    ...(locked ? { nixpkgs: { url: "", ...locked } } : {}),
  };
  const key = cacheKey(recipeData, parts.settings.system);
  const captured = await captureEnvironment(result.json, workspace, ctx, parts.settings.hookTimeoutMs);
  const { entry, publication } = await publishEnvironment(
    parts,
    workspace,
    captured,
    { recipe: recipeData, key, files: prints, flakeRef },
    ctx,
  );
  const closure = arrivalOf(result.progress.builds.done, result.progress.substitutions.done);
  return { environment: recordEnvironment(parts, workspace, recipe, entry, undefined), closure, ...(publication ? { publication } : {}) };
}

import { existsSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { ActionError } from "../../protocol/errors.js";
import { validatePackages } from "./attr-path.js";
import { splitFlakeRef } from "./flake-ref.js";
import { pinFromRef, type NixpkgsPin } from "./pin.js";
import { readSpec, type EnvironmentSpec } from "./spec.js";
import { packagesTemplate } from "./template.js";

/** What to prepare, after the request, the saved spec and the daemon default were reconciled. */
export type Recipe = { kind: "packages"; packages: string[]; pin: NixpkgsPin } | { kind: "flake"; ref: string; updateLock: boolean };

export interface PrepareRequest {
  workspace: string;
  packages?: string[];
  flake?: string;
  updateLock?: boolean;
}

/** Refuses a workspace that is not an absolute path to an existing directory. */
export function checkWorkspace(workspace: string): string {
  if (!isAbsolute(workspace))
    throw new ActionError("invalid_request", `workspace ${JSON.stringify(workspace)} is not an absolute path`, { path: "/workspace" });
  const abs = resolve(workspace);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    throw new ActionError("not_found", `workspace ${abs} does not exist; create the directory first`, { path: "/workspace" });
  }
  if (!isDir) throw new ActionError("invalid_request", `workspace ${abs} is not a directory`, { path: "/workspace" });
  return abs;
}

/** A flake ref relative to the workspace: its directory and attribute, refused when it leaves the workspace. */
export function parseFlakeRef(workspace: string, ref: string): { dir: string; attr?: string } {
  const parsed = splitFlakeRef(workspace, ref);
  if ("problem" in parsed) throw new ActionError("invalid_request", `flake ${parsed.problem}`, { path: "/flake" });
  const { dir } = parsed;
  if (!existsSync(join(dir, "flake.nix")))
    throw new ActionError("invalid_request", `flake ${JSON.stringify(ref)}: ${join(dir, "flake.nix")} does not exist`, { path: "/flake" });
  return parsed;
}

/** Reconciles a request with the saved definition (whose pin wins) and the default nixpkgs. */
export function planRecipe(req: PrepareRequest, workspace: string, defaultNixpkgs: string): { recipe: Recipe; spec?: EnvironmentSpec } {
  const spec = readSpec(workspace);
  const keepPin = (): NixpkgsPin => (spec?.packages !== undefined && spec.nixpkgs ? spec.nixpkgs : pinFromRef(defaultNixpkgs));
  if (req.packages !== undefined && req.flake !== undefined) {
    throw new ActionError("invalid_request", "pass either packages or flake, not both", { path: "/flake" });
  }
  if (req.packages !== undefined) return { spec, recipe: { kind: "packages", packages: validatePackages(req.packages), pin: keepPin() } };
  if (req.flake !== undefined) {
    parseFlakeRef(workspace, req.flake);
    return { spec, recipe: { kind: "flake", ref: req.flake, updateLock: req.updateLock === true } };
  }
  if (spec?.packages !== undefined) return { spec, recipe: { kind: "packages", packages: spec.packages, pin: keepPin() } };
  if (spec?.flake !== undefined) return { spec, recipe: { kind: "flake", ref: spec.flake, updateLock: req.updateLock === true } };
  if (existsSync(join(workspace, "flake.nix"))) return { spec, recipe: { kind: "flake", ref: ".", updateLock: req.updateLock === true } };
  throw new ActionError(
    "invalid_request",
    `${workspace} has no saved environment and no flake.nix; pass "packages" (e.g. ["nodejs"]) or "flake" (e.g. ".#dev")`,
    { path: "/packages" },
  );
}

/** The cache recipe of a package definition: sorted attrs, the exact pin, the template version. */
export function packagesRecipe(packages: readonly string[], pin: NixpkgsPin): Record<string, unknown> {
  return {
    kind: "packages",
    packages: [...packages].sort(),
    nixpkgs: { url: pin.url, rev: pin.rev, narHash: pin.narHash },
    templateVersion: packagesTemplate().version,
  };
}

/** Identity of a request for single-flight: same workspace and same recipe means the same job. */
export function recipeIdentity(workspace: string, recipe: Recipe): string {
  return recipe.kind === "packages"
    ? JSON.stringify([workspace, "packages", [...recipe.packages].sort(), recipe.pin.url])
    : JSON.stringify([workspace, "flake", recipe.ref, recipe.updateLock]);
}

import type { CacheEntry } from "../cache.js";
import { writeFileIfChanged } from "../files.js";
import type { Recipe } from "../recipe.js";
import { writeSpec, workspacePaths, type EnvironmentSpec } from "../spec.js";
import { renderPackagesFlake, packagesTemplate } from "../template.js";
import type { EnvironmentSummary, PrepareParts } from "./types.js";

/**
 * Phase "record": makes a cache entry the workspace's environment — its generated flake, its spec
 * (written only when something but the time changed) and the index jobs resolve it from.
 */
export function recordEnvironment(
  parts: PrepareParts,
  workspace: string,
  recipe: Recipe,
  entry: CacheEntry,
  previous: EnvironmentSpec | undefined,
): EnvironmentSummary {
  const { settings } = parts;
  const now = new Date().toISOString();
  const paths = workspacePaths(workspace);
  if (recipe.kind === "packages") writeFileIfChanged(paths.flake, renderPackagesFlake(recipe.pin.url, recipe.packages));
  const spec: EnvironmentSpec = {
    version: 1,
    ...(recipe.kind === "packages" ? { packages: recipe.packages } : { flake: recipe.ref }),
    nixpkgs: recipe.kind === "packages" ? recipe.pin : (entry.meta.recipe.nixpkgs as EnvironmentSpec["nixpkgs"]),
    system: settings.system,
    cacheKey: entry.meta.key,
    ...(recipe.kind === "packages" ? { templateVersion: packagesTemplate().version } : {}),
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
    daemonVersion: settings.daemonVersion,
  };
  if (!previous || JSON.stringify({ ...previous, updatedAt: "" }) !== JSON.stringify({ ...spec, updatedAt: "" }))
    writeSpec(workspace, spec);
  const info = {
    workspace,
    system: spec.system,
    cacheKey: spec.cacheKey,
    entryDir: entry.dir,
    packages: spec.packages,
    flake: spec.flake,
    nixpkgs: spec.nixpkgs,
    preparedAt: now,
  };
  const current = parts.environments.get(workspace);
  if (!current || current.info.cacheKey !== info.cacheKey || current.info.entryDir !== info.entryDir)
    parts.environments.record(info, entry.environment);
  parts.cache.touch(entry);
  return summaryOf(workspace, spec, entry, current?.info.preparedAt ?? now);
}

/** The summary a client gets of a workspace's environment. */
export function summaryOf(workspace: string, spec: EnvironmentSpec, entry: CacheEntry, preparedAt: string): EnvironmentSummary {
  return {
    workspace,
    system: spec.system,
    cacheKey: entry.meta.key,
    storePath: entry.meta.envStorePath,
    ...(spec.packages ? { packages: spec.packages } : { flake: spec.flake }),
    nixpkgs: spec.nixpkgs,
    variables: Object.keys(entry.environment.set).sort(),
    pathPrepend: entry.environment.prepend.PATH ?? [],
    hookRan: entry.meta.hookRan,
    preparedAt,
  };
}

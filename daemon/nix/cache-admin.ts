import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Static } from "@sinclair/typebox";
import type { CacheEntryInfo } from "../../protocol/actions/cache-list.js";
import { execNix } from "../runners/nix-cli.js";
import type { CacheMeta, EnvironmentCache } from "./cache.js";
import { inputsRootDir } from "./flake-inputs.js";
import type { PreparedWorkspace } from "./resolver.js";

/** One environment cache entry as `cache.list` shows it (the wire shape, from protocol/). */
export type CacheListing = Static<typeof CacheEntryInfo>;

interface EntryOnDisk {
  dir: string;
  system: string;
  meta: CacheMeta;
  lastUsedAt: string;
}

/** Every complete entry under `<cacheDir>/environments/<system>/<key>/` (temporary and half-written ones skipped). */
function entriesOnDisk(cache: EnvironmentCache): EntryOnDisk[] {
  const root = join(cache.cacheDir, "environments");
  const out: EntryOnDisk[] = [];
  for (const system of safeList(root)) {
    for (const key of safeList(join(root, system))) {
      if (!/^[0-9a-f]{64}$/.test(key)) continue;
      const entry = cache.readMeta(system, key);
      if (!entry) continue;
      out.push({ dir: entry.dir, system, meta: entry.meta, lastUsedAt: lastUse(entry.dir) });
    }
  }
  return out;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The last time a prepare used the entry (its completion marker is touched on every use). */
function lastUse(dir: string): string {
  try {
    return statSync(join(dir, "complete")).mtime.toISOString();
  } catch {
    return new Date(0).toISOString();
  }
}

// Paths per `nix path-info` call: far below the kernel's argument-size limit.
const PATHS_PER_CALL = 200;

/** Closure sizes of the valid paths (`nix path-info`, a few calls); a path Nix cannot size stays unknown. */
async function closureSizes(paths: string[], env: NodeJS.ProcessEnv | undefined): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (let i = 0; i < paths.length; i += PATHS_PER_CALL) {
    try {
      const out = await execNix("nix", ["path-info", "--json", "--closure-size", ...paths.slice(i, i + PATHS_PER_CALL)], {
        env,
        timeoutMs: 60_000,
      });
      for (const info of JSON.parse(out) as Array<{ path: string; closureSize?: number }>)
        if (typeof info.closureSize === "number") sizes.set(info.path, info.closureSize);
    } catch {
      /* sizes stay unknown */
    }
  }
  return sizes;
}

/** `cache.list`: every entry with the workspaces using it, its closure size and its last use, newest use first. */
export async function listCache(
  cache: EnvironmentCache,
  workspaces: readonly PreparedWorkspace[],
  env?: NodeJS.ProcessEnv,
): Promise<CacheListing[]> {
  const entries = entriesOnDisk(cache).map((e) => ({ ...e, valid: existsSync(e.meta.envStorePath) }));
  const sizes = await closureSizes(
    entries.filter((e) => e.valid).map((e) => e.meta.envStorePath),
    env,
  );
  return entries
    .map((e) => {
      const recipe = e.meta.recipe as { packages?: string[]; ref?: string };
      return {
        cacheKey: e.meta.key,
        system: e.system,
        ...(recipe.packages ? { packages: recipe.packages } : {}),
        ...(recipe.ref ? { flake: recipe.ref } : {}),
        storePath: e.meta.envStorePath,
        valid: e.valid,
        closureBytes: sizes.get(e.meta.envStorePath) ?? null,
        workspaces: workspaces.filter((w) => w.entryDir === e.dir).map((w) => w.workspace),
        createdAt: e.meta.createdAt,
        lastUsedAt: e.lastUsedAt,
        ...(e.meta.publication ? { publication: e.meta.publication } : {}),
      };
    })
    .sort((a, b) => b.lastUsedAt.localeCompare(a.lastUsedAt));
}

export interface PruneOptions {
  /** Only entries unused for longer than this are removed (default 0: any unused entry). */
  olderThanMs?: number;
  /** The newest N unused entries are kept whatever their age (default 0). */
  keep?: number;
}

export interface PruneResult {
  removed: Array<{ cacheKey: string; system: string; lastUsedAt: string }>;
  /** Entries still in the cache: in use by a workspace, kept by `keep`, or too recent. */
  kept: number;
}

/**
 * `cache.prune`: removes entries no prepared workspace points at — the entry directory, its GC
 * root and its flake-input roots — so the next garbage collection may free their store paths.
 * Never touches an entry in use; `keep` and `olderThanMs` spare recent unused ones.
 */
export function pruneCache(
  cache: EnvironmentCache,
  workspaces: readonly PreparedWorkspace[],
  options: PruneOptions,
  now = Date.now(),
): PruneResult {
  const inUse = new Set(workspaces.map((w) => w.entryDir));
  const entries = entriesOnDisk(cache);
  const unused = entries.filter((e) => !inUse.has(e.dir)).sort((a, b) => b.lastUsedAt.localeCompare(a.lastUsedAt));
  const removed: PruneResult["removed"] = [];
  for (const e of unused.slice(options.keep ?? 0)) {
    if (now - Date.parse(e.lastUsedAt) < (options.olderThanMs ?? 0)) continue;
    const root = cache.gcRoot(e.system, e.meta.key);
    // Out of the lookup path first (one rename), then the files and the roots.
    const doomed = `${e.dir}.old-prune-${randomBytes(4).toString("hex")}`;
    renameSync(e.dir, doomed);
    rmSync(doomed, { recursive: true, force: true });
    rmSync(root, { force: true });
    rmSync(inputsRootDir(root), { recursive: true, force: true });
    removed.push({ cacheKey: e.meta.key, system: e.system, lastUsedAt: e.lastUsedAt });
  }
  removeLeftovers(cache);
  return { removed, kept: entries.length - removed.length };
}

/**
 * Half-written (`.tmp-…`) and replaced (`….old-…`) entry directories a crash left behind. Prune
 * runs only while no prepare does, so none of them belongs to live work.
 */
function removeLeftovers(cache: EnvironmentCache): void {
  const root = join(cache.cacheDir, "environments");
  for (const system of safeList(root)) {
    for (const name of safeList(join(root, system))) {
      if (name.startsWith(".tmp-") || name.includes(".old-")) rmSync(join(root, system, name), { recursive: true, force: true });
    }
  }
}

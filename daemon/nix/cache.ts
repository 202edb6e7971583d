import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../util/canonical-json.js";
import type { Publication } from "./binary-cache.js";
import type { PreparedEnvironment } from "./environment.js";
import type { FileFingerprint } from "./fingerprint.js";

/** What a cache entry records besides the environment (meta.json). */
export interface CacheMeta {
  key: string;
  system: string;
  envStorePath: string;
  recipe: Record<string, unknown>;
  /** For flake recipes: the files Nix evaluated, to notice edits without running Nix. */
  files?: FileFingerprint[];
  /** Store paths of the flake and the inputs it was evaluated with (rooted beside the environment). */
  inputs?: string[];
  /** The push to the shared binary cache made when this entry was prepared. */
  publication?: Publication;
  nixVersion?: string;
  hookRan: boolean;
  createdAt: string;
}

export interface CacheEntry {
  dir: string;
  meta: CacheMeta;
  environment: PreparedEnvironment;
}

/** SHA-256 over a recipe written with sorted keys, so equal recipes share an entry on any machine of that system. */
export function cacheKey(recipe: Record<string, unknown>, system: string): string {
  return createHash("sha256").update(canonicalJson({ recipe, system })).digest("hex");
}

/** `<cacheDir>/environments/<system>/<key>/` and its GC root `<cacheDir>/gcroots/<system>/<key>`. */
export class EnvironmentCache {
  constructor(readonly cacheDir: string) {}

  entryDir(system: string, key: string): string {
    return join(this.cacheDir, "environments", system, key);
  }

  gcRoot(system: string, key: string): string {
    return join(this.cacheDir, "gcroots", system, key);
  }

  /**
   * A usable entry: its completion marker exists and its `-env` store path is still valid
   * (a vanished store path is a miss). Costs a few stats and two small reads, never a Nix process.
   */
  lookup(system: string, key: string): CacheEntry | undefined {
    const found = this.find(system, key);
    return found?.valid ? found.entry : undefined;
  }

  /**
   * A complete entry with its environment, and whether its `-env` store path still exists (`valid`
   * false: the store lost it, e.g. a fresh /nix under a kept home; a restore can bring it back).
   */
  find(system: string, key: string): { entry: CacheEntry; valid: boolean } | undefined {
    const entry = this.readMeta(system, key);
    if (!entry) return undefined;
    const valid = existsSync(entry.meta.envStorePath);
    try {
      return {
        entry: { ...entry, environment: JSON.parse(readFileSync(join(entry.dir, "env.json"), "utf8")) as PreparedEnvironment },
        valid,
      };
    } catch {
      return undefined;
    }
  }

  /** A complete entry's metadata, whether or not its store path is still valid (listing and pruning need no environment). */
  readMeta(system: string, key: string): Omit<CacheEntry, "environment"> | undefined {
    const dir = this.entryDir(system, key);
    if (!existsSync(join(dir, "complete"))) return undefined;
    try {
      return { dir, meta: JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as CacheMeta };
    } catch {
      return undefined;
    }
  }

  /** Records a use of the entry (its completion marker's mtime), for `cache.list` and `cache.prune --keep`. */
  touch(entry: CacheEntry): void {
    try {
      const now = new Date();
      utimesSync(join(entry.dir, "complete"), now, now);
    } catch {
      /* removed meanwhile: nothing to record */
    }
  }

  /**
   * Publishes an entry: everything is written into a temporary sibling, the completion marker
   * last, then the directory is renamed into place. An older entry under the key is replaced.
   */
  publish(meta: CacheMeta, environment: PreparedEnvironment): CacheEntry {
    const parent = join(this.cacheDir, "environments", meta.system);
    mkdirSync(parent, { recursive: true });
    const tmp = join(parent, `.tmp-${meta.key.slice(0, 16)}-${randomBytes(4).toString("hex")}`);
    mkdirSync(tmp);
    try {
      writeFileSync(join(tmp, "env.json"), `${JSON.stringify(environment, null, 2)}\n`);
      writeFileSync(join(tmp, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
      writeFileSync(join(tmp, "complete"), `${meta.createdAt}\n`);
      const dir = this.entryDir(meta.system, meta.key);
      if (existsSync(dir)) {
        const old = `${dir}.old-${randomBytes(4).toString("hex")}`;
        renameSync(dir, old);
        renameSync(tmp, dir);
        rmSync(old, { recursive: true, force: true });
      } else {
        renameSync(tmp, dir);
      }
      return { dir, meta, environment };
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
  }
}

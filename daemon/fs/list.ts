import type { Dirent } from "node:fs";
import { lstat, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import picomatch from "picomatch";
import type { FileEntry } from "../../protocol/actions/files-fs.js";
import { fromStats } from "./entry.js";
import { ignoredPaths } from "./gitignore.js";
import { isRefused, type FsPolicy } from "./policy.js";

export const DEFAULT_LIST_LIMIT = 1000;
/** Entries looked at per request, returned or not (a glob over a huge tree stops here, with more: true). */
const MAX_VISITED = 200_000;

export interface ListOptions {
  depth?: number;
  glob?: string;
  hidden?: boolean;
  gitignore?: boolean;
  limit?: number;
}

/**
 * A directory's entries to a depth, in tree order (each directory's names sorted, a directory's
 * contents right after it). Links are listed, never followed; hidden names (a leading dot) only
 * with hidden: true; the daemon's own directories never.
 */
export async function listTree(policy: FsPolicy, root: string, options: ListOptions): Promise<{ entries: FileEntry[]; more: boolean }> {
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  const depth = options.depth ?? 1;
  const ignored = options.gitignore ? await ignoredPaths(root) : undefined;
  const match = options.glob ? picomatch(options.glob, { dot: options.hidden === true, basename: !options.glob.includes("/") }) : undefined;
  const entries: FileEntry[] = [];
  let visited = 0;
  let more = false;

  const walk = async (dir: string, rel: string, level: number): Promise<void> => {
    let names: Dirent[];
    try {
      names = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // unreadable below the root: skipped, like find without -print errors
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const kept = names.filter((d) => {
      const childRel = rel ? `${rel}/${d.name}` : d.name;
      if (!options.hidden && d.name.startsWith(".")) return false;
      if (options.gitignore && d.name === ".git") return false;
      if (ignored?.has(childRel)) return false;
      return !isRefused(policy, join(dir, d.name));
    });
    const stats = await Promise.all(kept.map((d) => lstat(join(dir, d.name)).catch(() => undefined)));
    for (let i = 0; i < kept.length; i++) {
      if (more) return;
      const st = stats[i];
      if (!st) continue; // removed meanwhile
      if (++visited > MAX_VISITED) return void (more = true);
      const name = kept[i]!.name;
      const path = join(dir, name);
      const childRel = rel ? `${rel}/${name}` : name;
      if (!match || match(childRel)) {
        if (entries.length === limit) return void (more = true);
        entries.push(fromStats(path, st, st.isSymbolicLink() ? await readlink(path).catch(() => undefined) : undefined));
      }
      if (st.isDirectory() && level < depth) await walk(path, childRel, level + 1);
    }
  };
  await walk(root, "", 1);
  return { entries, more };
}

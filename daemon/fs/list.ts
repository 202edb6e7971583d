import type { Dirent } from "node:fs";
import { lstat, opendir, readlink } from "node:fs/promises";
import { join } from "node:path";
import picomatch from "picomatch";
import type { FileEntry } from "../../protocol/actions/files-fs.js";
import { fromStats } from "./entry.js";
import { ignoredPaths } from "./gitignore.js";
import { isRefused, type FsPolicy } from "./policy.js";

export const DEFAULT_LIST_LIMIT = 1000;
/** Directory entries read per request; past it no further directory is started (more: true). */
export const MAX_SCANNED = 1_000_000;
/** Names one selection pass keeps at least (a pass that yields no entry, e.g. for a glob, is then rarely repeated). */
const MIN_PASS = 256;
const READ_BUFFER = 512;

export interface ListOptions {
  depth?: number;
  glob?: string;
  hidden?: boolean;
  gitignore?: boolean;
  limit?: number;
}

const before = (a: string, b: string): boolean => a < b;

/** A max-heap of at most `size` names: what remains is the `size` smallest names pushed. */
class Smallest {
  readonly items: Dirent[] = [];
  dropped = false;

  constructor(private readonly size: number) {}

  push(d: Dirent): void {
    const h = this.items;
    if (h.length < this.size) {
      h.push(d);
      for (let i = h.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!before(h[p]!.name, h[i]!.name)) break;
        [h[p], h[i]] = [h[i]!, h[p]!];
        i = p;
      }
      return;
    }
    this.dropped = true;
    if (!before(d.name, h[0]!.name)) return;
    h[0] = d;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < h.length && before(h[top]!.name, h[l]!.name)) top = l;
      if (r < h.length && before(h[top]!.name, h[r]!.name)) top = r;
      if (top === i) break;
      [h[top], h[i]] = [h[i]!, h[top]!];
      i = top;
    }
  }

  sorted(): Dirent[] {
    return this.items.sort((a, b) => (before(a.name, b.name) ? -1 : before(b.name, a.name) ? 1 : 0));
  }
}

/** Neither file, directory, link nor special file: the filesystem did not say (DT_UNKNOWN); it may be a directory. */
function typeUnknown(d: Dirent): boolean {
  return !(d.isFile() || d.isDirectory() || d.isSymbolicLink() || d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice());
}

/**
 * A directory's entries to a depth, in tree order (each directory's names sorted, a directory's
 * contents right after it). Links are listed, never followed; hidden names (a leading dot) only
 * with hidden: true; the daemon's own directories never.
 *
 * Memory is in proportion to what is returned, not to the directory: each directory is read with
 * opendir in small batches, keeping only the smallest names that can still be returned (a bounded
 * heap), and only those are stat'ed; when they are used up without filling the limit (a glob that
 * matched few), the directory is read again for the names after them. `signal` stops the walk.
 */
export async function listTree(
  policy: FsPolicy,
  root: string,
  options: ListOptions,
  signal?: AbortSignal,
): Promise<{ entries: FileEntry[]; more: boolean }> {
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  const depth = options.depth ?? 1;
  const ignored = options.gitignore ? await ignoredPaths(root, signal) : undefined;
  const match = options.glob ? picomatch(options.glob, { dot: options.hidden === true, basename: !options.glob.includes("/") }) : undefined;
  const entries: FileEntry[] = [];
  let scanned = 0;
  let more = false;

  /** The smallest candidate names of `dir` after `after`; complete when none was left out. */
  const select = async (dir: string, rel: string, level: number, after: string | undefined, size: number) => {
    const kept = new Smallest(size);
    const handle = await opendir(dir, { bufferSize: READ_BUFFER }).catch(() => undefined);
    if (!handle) return undefined; // unreadable below the root: skipped, like find without -print errors
    for await (const d of handle) {
      signal?.throwIfAborted();
      scanned++;
      if (after !== undefined && !before(after, d.name)) continue;
      if (!options.hidden && d.name.startsWith(".")) continue;
      if (options.gitignore && d.name === ".git") continue;
      const childRel = rel ? `${rel}/${d.name}` : d.name;
      const descend = level < depth && (d.isDirectory() || typeUnknown(d));
      if (match && !descend && !match(childRel)) continue;
      if (ignored?.has(childRel) || isRefused(policy, join(dir, d.name))) continue;
      kept.push(d);
    }
    return { names: kept.sorted(), complete: !kept.dropped };
  };

  /** Lists `dir`'s part of the tree; false once the listing is full or stopped. */
  const walk = async (dir: string, rel: string, level: number): Promise<boolean> => {
    for (let after: string | undefined; ; ) {
      if (scanned >= MAX_SCANNED) return !(more = true);
      const pass = await select(dir, rel, level, after, Math.max(limit - entries.length + 1, MIN_PASS));
      if (!pass) return true;
      for (const d of pass.names) {
        const path = join(dir, d.name);
        const st = await lstat(path).catch(() => undefined);
        if (!st) continue; // removed meanwhile
        const childRel = rel ? `${rel}/${d.name}` : d.name;
        if (!match || match(childRel)) {
          if (entries.length === limit) return !(more = true);
          entries.push(fromStats(path, st, st.isSymbolicLink() ? await readlink(path).catch(() => undefined) : undefined));
        }
        if (st.isDirectory() && level < depth && !(await walk(path, childRel, level + 1))) return false;
      }
      if (pass.complete || pass.names.length === 0) return true;
      after = pass.names.at(-1)!.name;
    }
  };
  await walk(root, "", 1);
  return { entries, more };
}

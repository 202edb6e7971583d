import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Stats } from "node:fs";
import { lstat, opendir, realpath, stat } from "node:fs/promises";
import { ActionError } from "../../protocol/errors.js";
import { fsError, isMissing } from "./errors.js";

/**
 * Where file actions may act. The daemon's own config, state and cache directories (token,
 * issued tokens, job logs, the environment cache) are refused to every file action, whatever the
 * token's scope; `/`, the home directory and the workspace root can never be removed or moved.
 */
export interface FsPolicy {
  /** Real paths of the refused directories. */
  refused: readonly string[];
  /** Real and lexical paths that files.remove and files.move refuse to take away. */
  roots: readonly string[];
  /** Devices the refused directories are on (a hard link to a file in them can only be on one of these). */
  refusedDevices: readonly number[];
}

export interface PolicySettings {
  configDir: string;
  stateDir: string;
  cacheDir: string;
  workspaceRoot: string;
}

const cache = new WeakMap<PolicySettings, Promise<FsPolicy>>();

/** The policy for a config, computed once (the directories' real paths do not change while we run). */
export function policyFor(settings: PolicySettings): Promise<FsPolicy> {
  let policy = cache.get(settings);
  if (!policy) {
    policy = buildPolicy(settings);
    cache.set(settings, policy);
  }
  return policy;
}

async function buildPolicy(s: PolicySettings): Promise<FsPolicy> {
  const refused = await Promise.all([s.configDir, s.stateDir, s.cacheDir].map((d) => realpathLoose(resolve(d))));
  const rootsLexical = ["/", homedir(), s.workspaceRoot].map((d) => resolve(d));
  const roots = [...new Set([...rootsLexical, ...(await Promise.all(rootsLexical.map(realpathLoose)))])];
  const devices = await Promise.all(
    refused.map((d) =>
      stat(d).then(
        (st) => st.dev,
        () => undefined,
      ),
    ),
  );
  return { refused: [...new Set(refused)], roots, refusedDevices: [...new Set(devices.filter((d) => d !== undefined))] };
}

/** Entries looked at when searching the refused directories for a hard link's other name. */
const MAX_GUARDED_ENTRIES = 20_000;

/**
 * Refuses a file that is another name (a hard link) of a file in the daemon's own directories,
 * e.g. a link to the token planted elsewhere: paths cannot tell, so the device and inode are
 * compared. Only files with more than one link on a refused directory's device are looked up.
 */
export async function assertNotGuardedInode(policy: FsPolicy, st: Stats, path: string, field = "/path"): Promise<void> {
  if (st.nlink < 2 || !st.isFile() || !policy.refusedDevices.includes(st.dev)) return;
  const hit = await findInode(policy.refused, st.dev, st.ino);
  if (hit)
    throw new ActionError("forbidden", `${path} is a hard link to ${hit}, in the daemon's own directories; file actions never read it`, {
      path: field,
    });
}

/** The path of a file with this device and inode inside `dirs`, walked breadth first and bounded. */
async function findInode(dirs: readonly string[], dev: number, ino: number): Promise<string | undefined> {
  const queue = [...dirs];
  let seen = 0;
  while (queue.length > 0) {
    const dir = queue.shift()!;
    const handle = await opendir(dir, { bufferSize: 256 }).catch(() => undefined);
    if (!handle) continue;
    for await (const d of handle) {
      if (++seen > MAX_GUARDED_ENTRIES) return undefined;
      const path = join(dir, d.name);
      if (d.isDirectory()) queue.push(path);
      else if (d.isFile()) {
        const st = await lstat(path).catch(() => undefined);
        if (st && st.ino === ino && st.dev === dev) return path;
      }
    }
  }
  return undefined;
}

/** Whether `path` is `dir` itself or inside it. */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);
}

/** Refuses a real path inside one of the daemon's own directories. */
export function assertAllowed(policy: FsPolicy, real: string, field = "/path"): void {
  const hit = policy.refused.find((d) => within(real, d));
  if (hit)
    throw new ActionError("forbidden", `${real} is inside the daemon's own directory ${hit}; file actions never touch it`, { path: field });
}

/** Refuses a tree operation (recursive remove, move) on a directory that holds a refused directory or a root. */
export function assertNotAncestor(policy: FsPolicy, real: string, field = "/path"): void {
  const root = policy.roots.find((r) => r === real);
  if (root)
    throw new ActionError("invalid_request", `${real} is / , the home directory or the workspace root; it is never removed or moved`, {
      path: field,
    });
  const held = policy.refused.find((d) => within(d, real));
  if (held)
    throw new ActionError("forbidden", `${real} holds the daemon's own directory ${held}; file actions never touch it`, { path: field });
}

/** Whether a real path is one of the daemon's own directories or inside one (walks skip these). */
export function isRefused(policy: FsPolicy, real: string): boolean {
  return policy.refused.some((d) => within(real, d));
}

/**
 * realpath of the longest existing ancestor, with the rest of the path appended as written. A loop,
 * not a recursion: a missing path 2,000 levels deep would otherwise resume 2,000 awaits and joins
 * in one turn (a 157 ms stall for 1,000 levels).
 */
export async function realpathLoose(path: string): Promise<string> {
  const missing: string[] = [];
  for (let at = path; ; ) {
    try {
      const real = await realpath(at);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (err) {
      if (!isMissing(err)) throw err;
      const parent = dirname(at);
      if (parent === at) return path;
      missing.push(basename(at));
      at = parent;
    }
  }
}

/** Follows every link (reads): the real path of an existing file or directory. */
export async function resolveFollow(policy: FsPolicy, path: string, field = "/path"): Promise<string> {
  let real: string;
  try {
    real = await realpath(resolve(path));
  } catch (err) {
    throw fsError(err, path, field);
  }
  assertAllowed(policy, real, field);
  return real;
}

/** The entry itself (stat, move, remove, mkdir): the directories on the way resolved, the last name not followed. */
export async function resolveEntry(policy: FsPolicy, path: string, field = "/path"): Promise<string> {
  const lexical = resolve(path);
  const real = lexical === "/" ? "/" : join(await realpathLoose(dirname(lexical)), basename(lexical));
  assertAllowed(policy, real, field);
  return real;
}

/**
 * The real path of directory `lexical` for a write: a symbolic link on the way is followed only
 * when its target lies in the directory holding the link (or below), the rule a link in the last
 * position follows too; a missing rest is appended as written (files.write's parents: true).
 */
async function resolveWriteDir(lexical: string, path: string, field: string): Promise<string> {
  const names = lexical.split("/").filter(Boolean);
  let real = "/";
  for (let i = 0; i < names.length; i++) {
    const next = join(real, names[i]!);
    let st: Stats;
    try {
      st = await lstat(next);
    } catch (err) {
      if (isMissing(err)) return join(next, ...names.slice(i + 1));
      throw fsError(err, path, field);
    }
    real = st.isSymbolicLink() ? await containedTarget(next, real, path, field) : next;
  }
  return real;
}

/** The real target of link `link` in directory `dir`, refused unless it lies below `dir`. */
async function containedTarget(link: string, dir: string, path: string, field: string, onTheWay = true): Promise<string> {
  let target: string;
  try {
    target = await realpath(link);
  } catch (err) {
    throw new ActionError(
      "invalid_request",
      `${onTheWay ? `${link} (on the way to ${path})` : path} is a symbolic link whose target does not exist; write the target itself or remove the link first`,
      { path: field, cause: err },
    );
  }
  if (!within(target, dir) || target === dir) {
    const what = onTheWay ? `${link} (on the way to ${path})` : path;
    throw new ActionError(
      "invalid_request",
      `${what} is a symbolic link to ${target}, outside ${dir}; write to ${target} itself, or files.remove the link first`,
      { path: field },
    );
  }
  return target;
}

/**
 * Where a write or edit lands. A symbolic link — the file itself or a directory on the way — is
 * written through only when its target lies in the directory holding it (or below); a link
 * pointing elsewhere is refused, so a planted link can never redirect a write outside the
 * directory the agent meant.
 */
export async function resolveWriteTarget(policy: FsPolicy, path: string, field = "/path"): Promise<string> {
  const lexical = resolve(path);
  if (lexical === "/") throw new ActionError("invalid_request", "/ is a directory", { path: field });
  const dir = await resolveWriteDir(dirname(lexical), path, field);
  const entry = join(dir, basename(lexical));
  assertAllowed(policy, entry, field);
  let isLink = false;
  try {
    isLink = (await lstat(entry)).isSymbolicLink();
  } catch (err) {
    if (!isMissing(err)) throw fsError(err, path, field);
  }
  if (!isLink) return entry;
  const target = await containedTarget(entry, dir, path, field, false);
  assertAllowed(policy, target, field);
  return target;
}

import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { lstat, realpath } from "node:fs/promises";
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
  return { refused: [...new Set(refused)], roots };
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

/** realpath of the longest existing ancestor, with the rest of the path appended as written. */
export async function realpathLoose(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    if (!isMissing(err)) throw err;
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathLoose(parent), basename(path));
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
 * Where a write or edit lands. A symbolic link is written through only when its target lies in
 * the directory the caller named (or below it); a link pointing elsewhere is refused, so a
 * planted link can never redirect a write outside the directory the agent meant.
 */
export async function resolveWriteTarget(policy: FsPolicy, path: string, field = "/path"): Promise<string> {
  const entry = await resolveEntry(policy, path, field);
  let isLink = false;
  try {
    isLink = (await lstat(entry)).isSymbolicLink();
  } catch (err) {
    if (!isMissing(err)) throw fsError(err, path, field);
  }
  if (!isLink) return entry;
  let target: string;
  try {
    target = await realpath(entry);
  } catch (err) {
    throw new ActionError(
      "invalid_request",
      `${path} is a symbolic link whose target does not exist; write the target itself or remove the link first`,
      { path: field, cause: err },
    );
  }
  const dir = dirname(entry);
  if (!within(target, dir) || target === dir) {
    throw new ActionError(
      "invalid_request",
      `${path} is a symbolic link to ${target}, outside ${dir}; write to ${target} itself, or files.remove the link first`,
      { path: field },
    );
  }
  assertAllowed(policy, target, field);
  return target;
}

import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { runGit } from "../runners/git.js";
import type { WorkspaceDeps } from "./deps.js";
import { repoLockOptions, type LockWaitParams } from "./repo-lock.js";
import { resolveCommit, type WorkContext } from "./git-helpers.js";
import { checkId, DEFAULT_REPO_ID } from "./ids.js";
import { requireRepo } from "./repos.js";

export interface SnapshotResult {
  repo: string;
  ref: string;
  commit: string;
  /** Absolute path of the tar.gz in the daemon's state directory (download it with files.*). */
  path: string;
  bytes: number;
}

export interface BundleResult {
  repo: string;
  path: string;
  bytes: number;
  /** Every ref the bundle carries (refs/heads/task-* included), for a recovery clone. */
  refs: string[];
  lockWaitMs: number;
}

function stamp(): string {
  return new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** Writes via a hidden partial file renamed into place; a failure or cancel removes the partial. */
async function produce(finalPath: string, write: (partial: string) => Promise<void>): Promise<number> {
  await fs.mkdir(path.dirname(finalPath), { recursive: true });
  const partial = path.join(path.dirname(finalPath), `.${path.basename(finalPath)}.${randomBytes(4).toString("hex")}.partial`);
  try {
    await write(partial);
    await fs.rename(partial, finalPath);
  } catch (error) {
    await fs.rm(partial, { force: true });
    throw error;
  }
  return (await fs.stat(finalPath)).size;
}

/**
 * Archives the tree at `ref` (default HEAD of the clone) as `<state>/snapshots/<repo>-<commit>-<time>.tar.gz`
 * with `git archive` (paths at the top level, no prefix). Committed content only: the untracked
 * `.env` never appears. Needs no lock: the commit is resolved once and commits never change.
 */
export async function snapshotRepo(
  deps: WorkspaceDeps,
  params: { repo?: string; ref?: string },
  ctx: WorkContext = {},
): Promise<SnapshotResult> {
  const repoId = checkId(params.repo ?? DEFAULT_REPO_ID, "repo", "/repo");
  const clonePath = await requireRepo(deps, repoId);
  const ref = params.ref ?? "HEAD";
  const commit = await resolveCommit(clonePath, ref, "/ref", ctx.signal);
  const file = path.join(deps.stateDir, "snapshots", `${repoId}-${commit.slice(0, 12)}-${stamp()}.tar.gz`);
  ctx.progress?.({ phase: "archiving", message: `${repoId}@${commit.slice(0, 12)}` });
  const bytes = await produce(file, (partial) =>
    runGit(["archive", "--format=tar.gz", `--output=${partial}`, commit], { cwd: clonePath, signal: ctx.signal }).then(() => undefined),
  );
  return { repo: repoId, ref, commit, path: file, bytes };
}

/**
 * Writes `git bundle create --all` of a repository (every branch, task branches included, and
 * tags) as `<state>/bundles/<repo>-<time>.bundle`; `git clone <bundle>` restores it. Taken under
 * the repository's lock so the refs it records are one consistent moment.
 */
export async function bundleRepo(
  deps: WorkspaceDeps,
  params: { repo?: string } & LockWaitParams,
  ctx: WorkContext = {},
): Promise<BundleResult> {
  const repoId = checkId(params.repo ?? DEFAULT_REPO_ID, "repo", "/repo");
  const clonePath = await requireRepo(deps, repoId);
  const file = path.join(deps.stateDir, "bundles", `${repoId}-${stamp()}.bundle`);
  return deps.locks.withLock(repoId, repoLockOptions(`repos.bundle ${repoId}`, params, ctx), async (lock) => {
    ctx.progress?.({ phase: "bundling" });
    const bytes = await produce(file, (partial) =>
      runGit(["bundle", "create", "--progress", partial, "--all"], {
        cwd: clonePath,
        signal: ctx.signal,
        onProgress: (u) => ctx.progress?.(u),
      }).then(() => undefined),
    );
    const heads = (await runGit(["bundle", "list-heads", file], { cwd: clonePath, signal: ctx.signal })).stdout;
    const refs = heads
      .split("\n")
      .map((line) => line.split(" ")[1])
      .filter((r): r is string => r !== undefined && r.length > 0);
    return { repo: repoId, path: file, bytes, refs, lockWaitMs: lock.waitedMs };
  });
}

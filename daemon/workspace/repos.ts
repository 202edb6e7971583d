import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Static } from "@sinclair/typebox";
import { ActionError } from "../../protocol/errors.js";
import type { RepoInfo as RepoInfoSchema } from "../../protocol/workspace.js";
import { GitFailure, runGit } from "../runners/git.js";
import type { WorkspaceDeps } from "./deps.js";
import { repoLockOptions, type LockWaitParams } from "./repo-lock.js";
import { exists, headInfo, listDir, identityEnv, pinEnvExclude, sweepLeftovers, type WorkContext } from "./git-helpers.js";
import { DEFAULT_REPO_ID, isValidId } from "./ids.js";
import { checkClonePath, checkCloneUrl, maskUrlCredentials } from "./source-url.js";

export interface AddRepoParams extends LockWaitParams {
  repo?: string;
  url?: string;
  path?: string;
}

/** One repository as repos.list reports it (the wire shape, from protocol/). */
export type RepoInfo = Static<typeof RepoInfoSchema>;

export interface AddRepoResult extends RepoInfo {
  /** "clone" from url/path, or "init" for a new empty repository. */
  source: "clone" | "init";
  /** True when the daemon made the first commit so that worktrees have something to branch from. */
  initialCommit: boolean;
  lockWaitMs: number;
}

/** Branch of a repository created by `git init` (no url or path). */
export const INIT_BRANCH = "main";
const INITIAL_COMMIT_MESSAGE = "Initial commit (created by hotline so task branches have a base)";

/**
 * Creates a repository's shared clone: `git clone` from url/path, or `git init -b main` when
 * neither is given. The clone is built in a hidden sibling directory and renamed into place, so
 * a failed or cancelled clone leaves nothing behind. A repository with no commit (new, or an empty
 * remote) gets one empty initial commit, because worktrees need a commit to branch from. `/.env`
 * is pinned in the clone's `info/exclude`.
 */
export async function addRepo(deps: WorkspaceDeps, params: AddRepoParams, ctx: WorkContext = {}): Promise<AddRepoResult> {
  const { repoId, source, clonePath, repoDir } = await checkAddRepo(deps, params);
  await fs.mkdir(repoDir, { recursive: true });
  return deps.locks.withLock(repoId, repoLockOptions(`repos.add ${repoId}`, params, ctx), async (lock) => {
    if (await exists(clonePath)) {
      throw repoExists(repoId, clonePath);
    }
    await sweepLeftovers(repoDir, ".repo.partial-");
    const partial = path.join(repoDir, `.repo.partial-${randomBytes(4).toString("hex")}`);
    try {
      if (source !== undefined) {
        ctx.progress?.({ phase: "cloning", message: params.url !== undefined ? maskUrlCredentials(source) : source });
        await runGit(["clone", "--progress", "--", source, partial], {
          cwd: repoDir,
          signal: ctx.signal,
          onProgress: (u) => ctx.progress?.(u),
          onStderrLine: (line) => ctx.output?.("stderr", `${line}\n`),
        }).catch((error: unknown) => {
          throw cloneError(error, params.url !== undefined ? "/url" : "/path");
        });
      } else {
        await runGit(["init", "-q", "-b", INIT_BRANCH, "--", partial], { cwd: repoDir, signal: ctx.signal });
      }
      let head = await headInfo(partial, ctx.signal);
      let initialCommit = false;
      if (head.commit === null) {
        const env = await identityEnv(partial, deps.identity, ctx.signal);
        await runGit(["commit", "-q", "--allow-empty", "-m", INITIAL_COMMIT_MESSAGE], { cwd: partial, env, signal: ctx.signal });
        head = await headInfo(partial, ctx.signal);
        initialCommit = true;
      }
      await pinEnvExclude(path.join(partial, ".git"));
      ctx.signal?.throwIfAborted();
      await fs.rename(partial, clonePath);
      const origin = await originOf(clonePath, ctx.signal);
      return {
        repo: repoId,
        path: clonePath,
        ...head,
        origin,
        source: source ? "clone" : "init",
        initialCommit,
        lockWaitMs: lock.waitedMs,
      };
    } catch (error) {
      await fs.rm(partial, { recursive: true, force: true });
      throw error;
    }
  });
}

/**
 * Validates a repos.add request without side effects — id, url/path, and that the repository
 * does not exist yet — so a handler can refuse at once instead of through a failed job.
 */
export async function checkAddRepo(deps: WorkspaceDeps, params: AddRepoParams) {
  const repoId = params.repo ?? DEFAULT_REPO_ID;
  const clonePath = deps.layout.clonePath(repoId);
  if (params.url !== undefined && params.path !== undefined) {
    throw new ActionError("invalid_request", "give url or path, not both", { path: "/path" });
  }
  const source = params.url !== undefined ? checkCloneUrl(params.url) : params.path !== undefined ? checkClonePath(params.path) : undefined;
  if (await exists(clonePath)) {
    throw repoExists(repoId, clonePath);
  }
  return { repoId, source, clonePath, repoDir: deps.layout.repoDir(repoId) };
}

function repoExists(repoId: string, clonePath: string): ActionError {
  return new ActionError("conflict", `repository ${repoId} already exists at ${clonePath}; use it as it is, or pick another repo id`, {
    path: "/repo",
  });
}

/** Maps a failed clone to not_found (no such repository) or unavailable (network, auth, …). */
function cloneError(error: unknown, fieldPath: string): unknown {
  if (!(error instanceof GitFailure)) return error;
  const tail = error.stderr.trim().split("\n").slice(-3).join(" | ");
  if (/not found|does not exist|does not appear to be a git repository|repository .* not found/i.test(error.stderr)) {
    return new ActionError("not_found", `git clone found no repository there: ${tail}`, { path: fieldPath });
  }
  return new ActionError(
    "unavailable",
    `git clone failed: ${tail}; check the address, the network, and credentials (a credential helper or ssh key)`,
    { path: fieldPath },
  );
}

async function originOf(clonePath: string, signal?: AbortSignal): Promise<string | null> {
  const r = await runGit(["config", "--get", "remote.origin.url"], { cwd: clonePath, signal, allowFailure: true });
  const url = r.stdout.trim();
  return url ? maskUrlCredentials(url) : null;
}

/** Throws not_found unless the repository's clone exists; returns its path. */
export async function requireRepo(deps: WorkspaceDeps, repoId: string, fieldPath = "/repo"): Promise<string> {
  const clonePath = deps.layout.clonePath(repoId, fieldPath);
  if (!(await exists(path.join(clonePath, ".git")))) {
    throw new ActionError(
      "not_found",
      `repository ${repoId} does not exist; create it with repos.add {"repo": "${repoId}"} (see repos.list)`,
      { path: fieldPath },
    );
  }
  return clonePath;
}

/** Lists the shared clones, sorted by id, with their checked-out branch, commit and origin. */
export async function listRepos(deps: WorkspaceDeps, ctx: WorkContext = {}): Promise<RepoInfo[]> {
  const names = await listDir(deps.layout.reposDir);
  const repos: RepoInfo[] = [];
  for (const name of names.filter(isValidId).sort()) {
    const clonePath = deps.layout.clonePath(name);
    if (!(await exists(path.join(clonePath, ".git")))) continue;
    const [head, origin] = await Promise.all([headInfo(clonePath, ctx.signal), originOf(clonePath, ctx.signal)]);
    repos.push({ repo: name, path: clonePath, ...head, origin });
  }
  return repos;
}

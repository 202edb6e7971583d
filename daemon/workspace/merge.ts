import { randomBytes } from "node:crypto";
import path from "node:path";
import { ActionError } from "../../protocol/errors.js";
import { runGit, splitNul } from "../runners/git.js";
import type { WorkspaceDeps } from "./deps.js";
import { repoLockOptions, type LockWaitParams } from "./repo-lock.js";
import { headInfo, identityEnv, sweepLeftovers, type WorkContext } from "./git-helpers.js";
import { checkId, checkRefArgument } from "./ids.js";
import { requireRepo } from "./repos.js";
import { loadTask } from "./tasks.js";

export interface MergeResult {
  task: string;
  branch: string;
  into: string;
  /** False when `into` already contained the task branch (nothing to do). */
  merged: boolean;
  /** `into`'s commit after the merge. */
  commit: string;
  lockWaitMs: number;
}

/** The worktree that has `branch` checked out (the clone or a task's), if any. */
async function worktreeOf(clonePath: string, branch: string, signal?: AbortSignal): Promise<string | undefined> {
  const out = (await runGit(["worktree", "list", "--porcelain", "-z"], { cwd: clonePath, signal })).stdout;
  let current: string | undefined;
  for (const field of out.split("\0")) {
    if (field.startsWith("worktree ")) current = field.slice("worktree ".length);
    else if (field === `branch refs/heads/${branch}`) return current;
  }
  return undefined;
}

async function trackedChanges(cwd: string, signal?: AbortSignal): Promise<string[]> {
  const out = (await runGit(["status", "--porcelain=v1", "-z", "--untracked-files=no"], { cwd, signal })).stdout;
  return splitNul(out);
}

/**
 * Merges a task's branch into `into` (default: the branch checked out in the clone) with a merge
 * commit, under the repository's lock. The merge runs in whichever worktree has `into` checked out,
 * or in a temporary worktree when none does. A conflict is aborted with `git merge --abort`, the
 * worktree is checked to be clean again, and `conflict` is thrown listing the conflicting files.
 */
export async function mergeTask(
  deps: WorkspaceDeps,
  params: { task: string; into?: string } & LockWaitParams,
  ctx: WorkContext = {},
): Promise<MergeResult> {
  const meta = await loadTask(deps, checkId(params.task, "task", "/task"));
  const clonePath = await requireRepo(deps, meta.repo);
  const signal = ctx.signal;
  const env = await identityEnv(clonePath, deps.identity, signal); // outside the lock: config is shared by all worktrees
  return deps.locks.withLock(meta.repo, repoLockOptions(`tasks.merge ${meta.task}`, params, ctx), async (lock) => {
    const into = params.into ?? (await headInfo(clonePath, signal)).branch;
    if (into === null)
      throw new ActionError("conflict", `the clone of ${meta.repo} has a detached HEAD; pass into: "<branch>"`, { path: "/into" });
    checkRefArgument(into, "/into");
    if (into === meta.branch)
      throw new ActionError("invalid_request", `cannot merge ${meta.branch} into itself; pass another branch as into`, { path: "/into" });
    const known = await runGit(["show-ref", "--verify", "--quiet", `refs/heads/${into}`], { cwd: clonePath, signal, allowFailure: true });
    if (known.exitCode !== 0)
      throw new ActionError("not_found", `branch ${into} does not exist in repository ${meta.repo}`, { path: "/into" });

    if ((await sweepLeftovers(deps.layout.repoDir(meta.repo), ".merge-")) > 0)
      await runGit(["worktree", "prune"], { cwd: clonePath, signal });
    let where = await worktreeOf(clonePath, into, signal);
    let temporary: string | undefined;
    if (where === undefined) {
      temporary = path.join(deps.layout.repoDir(meta.repo), `.merge-${randomBytes(4).toString("hex")}`);
      await runGit(["worktree", "add", "--quiet", "--", temporary, into], { cwd: clonePath, signal });
      where = temporary;
    }
    try {
      const dirty = await trackedChanges(where, signal);
      if (dirty.length > 0) {
        throw new ActionError(
          "conflict",
          `the worktree of ${into} (${where}) has uncommitted changes to tracked files; commit or discard them before merging`,
          { path: "/into", details: { worktree: where } },
        );
      }
      const before = (await headInfo(where, signal)).commit;
      const message = `Merge ${meta.branch} into ${into}`;
      // Not `git merge -- <ref>`: the ref is our own refs/heads/task-<validated id>.
      const r = await runGit(["merge", "--no-ff", "--no-edit", "-m", message, `refs/heads/${meta.branch}`], {
        cwd: where,
        env,
        signal,
        allowFailure: true,
      });
      if (r.exitCode !== 0) throw await abortMerge(where, meta.branch, into, r.stdout + r.stderr, signal);
      const after = (await headInfo(where, signal)).commit!;
      return { task: meta.task, branch: meta.branch, into, merged: after !== before, commit: after, lockWaitMs: lock.waitedMs };
    } finally {
      if (temporary !== undefined) {
        await runGit(["worktree", "remove", "--force", "--", temporary], { cwd: clonePath, allowFailure: true });
        await runGit(["worktree", "prune"], { cwd: clonePath, allowFailure: true });
      }
    }
  });
}

/** Collects the conflicting files, aborts the merge, verifies the tree is clean, and builds the error. */
async function abortMerge(cwd: string, branch: string, into: string, gitSaid: string, signal?: AbortSignal): Promise<ActionError> {
  const files = splitNul((await runGit(["diff", "--name-only", "--diff-filter=U", "-z"], { cwd, signal })).stdout);
  const inMerge = await runGit(["rev-parse", "-q", "--verify", "MERGE_HEAD"], { cwd, signal, allowFailure: true });
  if (inMerge.exitCode === 0) await runGit(["merge", "--abort"], { cwd, signal });
  const left = await trackedChanges(cwd, signal);
  if (left.length > 0) {
    return new ActionError(
      "internal",
      `merge of ${branch} into ${into} failed and the worktree ${cwd} is not clean after aborting (${left.length} entries); inspect it by hand`,
    );
  }
  if (files.length === 0) {
    const said = gitSaid.trim().split("\n").slice(-3).join(" | ");
    return new ActionError("conflict", `git could not merge ${branch} into ${into}: ${said}; nothing was changed`, {
      details: { branch, into, files: [] },
    });
  }
  return new ActionError(
    "conflict",
    `merging ${branch} into ${into} conflicts in ${files.length} file(s): ${files.slice(0, 10).join(", ")}; the merge was aborted and ${into} is unchanged — resolve by merging ${into} into the task (or rebasing) and committing, then merge again`,
    {
      details: { branch, into, files },
    },
  );
}

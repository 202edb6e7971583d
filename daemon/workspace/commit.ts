import { ActionError } from "../../protocol/errors.js";
import { runGit, splitNul } from "../runners/git.js";
import type { WorkspaceDeps } from "./deps.js";
import { repoLockOptions, type LockWaitParams } from "./repo-lock.js";
import { exists, identityEnv, type WorkContext } from "./git-helpers.js";
import { checkId } from "./ids.js";
import { loadTask } from "./tasks.js";

export interface CommitResult {
  task: string;
  branch: string;
  committed: boolean;
  /** The new commit id (absent when there was nothing to commit). */
  commit?: string;
  /** Paths in the commit (at most MAX_LISTED_FILES of them). */
  files: string[];
  fileCount: number;
  lockWaitMs: number;
}

const MAX_LISTED_FILES = 200;
const MAX_MESSAGE_BYTES = 64 * 1024;

/** Whether a staged path is the secret root `.env` (or something inside a root `.env/` directory). */
export function isRootEnvPath(p: string): boolean {
  return p === ".env" || p.startsWith(".env/");
}

/**
 * Commits everything in a task's worktree except the root `.env`: `git add -A`, then an explicit
 * `git reset -q -- .env` whose exit status is checked, then a check of the staged list that refuses
 * to commit if `.env` is still staged — three separate steps, none of which can fail silently. A
 * `.env` in a subdirectory is ordinary content and is committed. Nothing staged → committed:false.
 * Serialized on the repository's lock: commits of two tasks of one repo update the shared refs.
 */
export async function commitTask(
  deps: WorkspaceDeps,
  params: { task: string; message: string } & LockWaitParams,
  ctx: WorkContext = {},
): Promise<CommitResult> {
  const meta = await loadTask(deps, checkId(params.task, "task", "/task"));
  if (params.message.trim() === "" || Buffer.byteLength(params.message) > MAX_MESSAGE_BYTES || params.message.includes("\0")) {
    throw new ActionError("invalid_request", `message must be non-empty text without NUL bytes, at most ${MAX_MESSAGE_BYTES} bytes`, {
      path: "/message",
    });
  }
  if (!(await exists(meta.path))) {
    throw new ActionError(
      "not_found",
      `task ${meta.task}'s worktree ${meta.path} is missing; remove the task with tasks.remove and create it again`,
      { path: "/task" },
    );
  }
  const cwd = meta.path;
  const signal = ctx.signal;
  const env = await identityEnv(cwd, deps.identity, signal); // outside the lock: reads config only
  return deps.locks.withLock(meta.repo, repoLockOptions(`tasks.commit ${meta.task}`, params, ctx), async (lock) => {
    await runGit(["add", "-A"], { cwd, signal });
    // Always run, whether or not .env exists or is staged: it must not depend on a pathspec matching.
    await runGit(["reset", "-q", "--", ":(top,literal).env"], { cwd, signal });
    const staged = splitNul((await runGit(["diff", "--cached", "--name-only", "--no-renames", "-z"], { cwd, signal })).stdout);
    const leaked = staged.filter(isRootEnvPath);
    if (leaked.length > 0) {
      await runGit(["reset", "-q"], { cwd, signal, allowFailure: true });
      throw new ActionError(
        "internal",
        `refusing to commit: the root .env is still staged after an explicit reset (${leaked.join(", ")}); nothing was committed`,
      );
    }
    const base = { task: meta.task, branch: meta.branch, lockWaitMs: lock.waitedMs };
    if (staged.length === 0) return { ...base, committed: false, files: [], fileCount: 0 };
    await runGit(["commit", "-q", "--no-verify", "--cleanup=whitespace", "--file=-"], { cwd, env, signal, input: params.message });
    const commit = (await runGit(["rev-parse", "HEAD"], { cwd, signal })).stdout.trim();
    return { ...base, committed: true, commit, files: staged.slice(0, MAX_LISTED_FILES), fileCount: staged.length };
  });
}

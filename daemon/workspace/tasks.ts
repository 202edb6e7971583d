import fs from "node:fs/promises";
import path from "node:path";
import type { Static } from "@sinclair/typebox";
import { ActionError } from "../../protocol/errors.js";
import type { TaskInfo as TaskInfoSchema } from "../../protocol/workspace.js";
import { GitFailure, runGit } from "../runners/git.js";
import type { WorkspaceDeps } from "./deps.js";
import { repoLockOptions, type LockWaitParams } from "./repo-lock.js";
import { exists, headInfo, listDir, resolveCommit, type WorkContext } from "./git-helpers.js";
import { checkId, DEFAULT_REPO_ID, isValidId } from "./ids.js";
import { requireRepo } from "./repos.js";

/** What `tasks/<id>/task.json` records: the link from a task to its repository. */
export interface TaskMeta {
  task: string;
  repo: string;
  branch: string;
  base: string;
  baseCommit: string;
  createdAt: string;
}

/** One task as tasks.list reports it (the wire shape, from protocol/): its metadata, worktree path and commit. */
export type TaskInfo = Static<typeof TaskInfoSchema>;

export interface CreateTaskParams extends LockWaitParams {
  task: string;
  repo?: string;
  base?: string;
}

/** Reads a task's metadata, or throws not_found naming the task. */
export async function loadTask(deps: WorkspaceDeps, taskId: string, fieldPath = "/task"): Promise<TaskMeta & { path: string }> {
  const worktree = deps.layout.worktreePath(taskId, fieldPath);
  let meta: TaskMeta;
  try {
    meta = JSON.parse(await fs.readFile(deps.layout.taskMetaPath(taskId), "utf8")) as TaskMeta;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      const half = await exists(deps.layout.taskDir(taskId));
      const hint = half
        ? `; its directory exists without task.json (an interrupted tasks.create): clear it with tasks.remove {"task": "${taskId}", "force": true}`
        : "; create it with tasks.create or see tasks.list";
      throw new ActionError("not_found", `task ${taskId} does not exist${hint}`, { path: fieldPath });
    }
    throw new ActionError("internal", `task ${taskId} has an unreadable task.json: ${(error as Error).message}`);
  }
  return { ...meta, path: worktree };
}

/**
 * Creates `tasks/<task>/repo`, a worktree of the repository's clone on a new branch `task-<task>`
 * starting at `base` (default: the clone's HEAD). A task id is unique across repositories; an
 * existing task directory or branch is a conflict. Runs under the repository's lock because the
 * new branch and worktree entry live in the clone's shared git directory.
 */
export async function createTask(
  deps: WorkspaceDeps,
  params: CreateTaskParams,
  ctx: WorkContext = {},
): Promise<TaskInfo & { lockWaitMs: number }> {
  const taskId = checkId(params.task, "task", "/task");
  const repoId = params.repo ?? DEFAULT_REPO_ID;
  const clonePath = await requireRepo(deps, repoId);
  const taskDir = deps.layout.taskDir(taskId);
  const worktree = deps.layout.worktreePath(taskId);
  const branch = deps.layout.branch(taskId);
  return deps.locks.withLock(repoId, repoLockOptions(`tasks.create ${taskId}`, params, ctx), async (lock) => {
    if (await exists(taskDir)) throw await taskExists(deps, taskId);
    const base = params.base ?? "HEAD";
    const baseCommit = await resolveCommit(clonePath, base, "/base", ctx.signal);
    const branchExists = await runGit(["show-ref", "--verify", "--quiet", `refs/heads/${branch}`], {
      cwd: clonePath,
      signal: ctx.signal,
      allowFailure: true,
    });
    if (branchExists.exitCode === 0) {
      throw new ActionError(
        "conflict",
        `branch ${branch} already exists in repository ${repoId} (a removed task's unmerged work is kept there); choose another task id, or delete the branch first (git -C ${clonePath} branch -D ${branch})`,
        { path: "/task" },
      );
    }
    await fs.mkdir(deps.layout.tasksDir, { recursive: true });
    try {
      await fs.mkdir(taskDir); // exclusive: a second create of the same id fails here
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") throw await taskExists(deps, taskId);
      throw error;
    }
    try {
      await runGit(["worktree", "add", "--quiet", "-b", branch, "--", worktree, baseCommit], { cwd: clonePath, signal: ctx.signal });
      const meta: TaskMeta = { task: taskId, repo: repoId, branch, base, baseCommit, createdAt: new Date().toISOString() };
      const metaPath = deps.layout.taskMetaPath(taskId);
      await fs.writeFile(`${metaPath}.tmp`, `${JSON.stringify(meta, null, 2)}\n`);
      await fs.rename(`${metaPath}.tmp`, metaPath);
      return { ...meta, path: worktree, commit: baseCommit, lockWaitMs: lock.waitedMs };
    } catch (error) {
      await runGit(["worktree", "remove", "--force", "--", worktree], { cwd: clonePath, allowFailure: true });
      await runGit(["branch", "-D", "--", branch], { cwd: clonePath, allowFailure: true });
      await fs.rm(taskDir, { recursive: true, force: true });
      throw error;
    }
  });
}

async function taskExists(deps: WorkspaceDeps, taskId: string): Promise<ActionError> {
  const half = !(await exists(deps.layout.taskMetaPath(taskId)));
  const hint = half
    ? `; it is left over from an interrupted tasks.create: clear it with tasks.remove {"task": "${taskId}", "force": true}`
    : "; use it, or remove it first with tasks.remove";
  return new ActionError("conflict", `task ${taskId} already exists at ${deps.layout.worktreePath(taskId)}${hint}`, { path: "/task" });
}

/** Lists tasks (optionally of one repository), sorted by id, with each worktree's current commit. */
export async function listTasks(deps: WorkspaceDeps, filter: { repo?: string } = {}, ctx: WorkContext = {}): Promise<TaskInfo[]> {
  if (filter.repo !== undefined) checkId(filter.repo, "repo", "/repo");
  const names = await listDir(deps.layout.tasksDir);
  const tasks: TaskInfo[] = [];
  for (const name of names.filter(isValidId).sort()) {
    let meta: TaskMeta & { path: string };
    try {
      meta = await loadTask(deps, name);
    } catch {
      continue; // a directory without task.json is a create that crashed half-way, not a task
    }
    if (filter.repo !== undefined && meta.repo !== filter.repo) continue;
    const commit = (await exists(meta.path)) ? (await headInfo(meta.path, ctx.signal)).commit : null;
    tasks.push({ ...meta, commit });
  }
  return tasks;
}

export interface RemoveTaskResult {
  task: string;
  repo: string;
  branch: string;
  /** False when the branch was kept because it holds commits not merged into the clone's HEAD. */
  branchDeleted: boolean;
  lockWaitMs: number;
}

/**
 * Removes a task's worktree and directory. Without `force`, a worktree with uncommitted changes is
 * a conflict, and the branch is deleted only when it is merged into the clone's HEAD (so unmerged
 * work survives in the branch and in bundles). With `force`, changes and the branch are discarded.
 */
export async function removeTask(
  deps: WorkspaceDeps,
  params: { task: string; force?: boolean } & LockWaitParams,
  ctx: WorkContext = {},
): Promise<RemoveTaskResult> {
  const taskId = checkId(params.task, "task", "/task");
  if (params.force === true && !(await exists(deps.layout.taskMetaPath(taskId))) && (await exists(deps.layout.taskDir(taskId)))) {
    return removeHalfCreatedTask(deps, taskId, params.lockTimeoutMs, ctx);
  }
  const meta = await loadTask(deps, taskId);
  const clonePath = await requireRepo(deps, meta.repo);
  const force = params.force === true;
  return deps.locks.withLock(meta.repo, repoLockOptions(`tasks.remove ${meta.task}`, params, ctx), async (lock) => {
    if (await exists(meta.path)) {
      const args = ["worktree", "remove", ...(force ? ["--force", "--force"] : []), "--", meta.path];
      await runGit(args, { cwd: clonePath, signal: ctx.signal }).catch((error: unknown) => {
        if (error instanceof GitFailure && /modified or untracked|locked|is dirty/i.test(error.stderr)) {
          throw new ActionError(
            "conflict",
            `task ${meta.task} has uncommitted changes; commit them with tasks.commit, or pass force: true to discard them`,
            { path: "/task" },
          );
        }
        throw error;
      });
    }
    await runGit(["worktree", "prune"], { cwd: clonePath, signal: ctx.signal });
    const del = await runGit(["branch", force ? "-D" : "-d", "--", meta.branch], {
      cwd: clonePath,
      signal: ctx.signal,
      allowFailure: true,
    });
    await fs.rm(deps.layout.taskDir(meta.task), { recursive: true, force: true });
    return { task: meta.task, repo: meta.repo, branch: meta.branch, branchDeleted: del.exitCode === 0, lockWaitMs: lock.waitedMs };
  });
}

/**
 * Clears a task directory without task.json — what a daemon crash in the middle of tasks.create
 * leaves — so its id can be used again (only with force). The repository is read from the
 * worktree's `.git` file when the worktree was made; its branch is deleted too.
 */
async function removeHalfCreatedTask(
  deps: WorkspaceDeps,
  taskId: string,
  lockTimeoutMs: number | undefined,
  ctx: WorkContext,
): Promise<RemoveTaskResult> {
  const branch = deps.layout.branch(taskId);
  let repo: string | undefined;
  try {
    const gitFile = await fs.readFile(path.join(deps.layout.worktreePath(taskId), ".git"), "utf8");
    const gitdir = /^gitdir: (.+)\/\.git\/worktrees\/[^/]+\s*$/m.exec(gitFile)?.[1];
    if (gitdir !== undefined && path.dirname(path.dirname(gitdir)) === deps.layout.reposDir) repo = path.basename(path.dirname(gitdir));
  } catch {
    repo = undefined; // the worktree was never made: only the directory is left
  }
  const clear = async () => fs.rm(deps.layout.taskDir(taskId), { recursive: true, force: true });
  if (repo === undefined || !isValidId(repo)) {
    await clear();
    return { task: taskId, repo: repo ?? "", branch, branchDeleted: false, lockWaitMs: 0 };
  }
  const clonePath = deps.layout.clonePath(repo);
  return deps.locks.withLock(repo, repoLockOptions(`tasks.remove ${taskId}`, { lockTimeoutMs }, ctx), async (lock) => {
    await clear();
    await runGit(["worktree", "prune"], { cwd: clonePath, signal: ctx.signal });
    const del = await runGit(["branch", "-D", "--", branch], { cwd: clonePath, signal: ctx.signal, allowFailure: true });
    return { task: taskId, repo: repo!, branch, branchDeleted: del.exitCode === 0, lockWaitMs: lock.waitedMs };
  });
}

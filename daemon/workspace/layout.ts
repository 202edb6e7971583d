import path from "node:path";
import { checkId, taskBranch } from "./ids.js";

/**
 * Where everything lives under the workspace root (default `/workspace`):
 *
 *   project/repos/<repoId>/repo     the one shared clone of a repository
 *   project/repos/<repoId>/.lock    that repository's cross-process lock file
 *   tasks/<taskId>/repo             a git worktree of the clone, on branch task-<taskId>
 *   tasks/<taskId>/task.json        which repository the task belongs to, and its base
 *
 * Every path is built from an id that passed checkId, so none can leave the root.
 */
export class WorkspaceLayout {
  readonly root: string;

  constructor(root: string) {
    if (!path.isAbsolute(root)) throw new Error(`workspace root must be an absolute path, got ${JSON.stringify(root)}`);
    this.root = path.resolve(root);
  }

  /** Parent of all repository directories. */
  get reposDir(): string {
    return path.join(this.root, "project", "repos");
  }

  /** Parent of all task directories. */
  get tasksDir(): string {
    return path.join(this.root, "tasks");
  }

  /** The directory holding a repository's clone and lock (outside the clone's working tree). */
  repoDir(repoId: string, fieldPath = "/repo"): string {
    return path.join(this.reposDir, checkId(repoId, "repo", fieldPath));
  }

  /** The shared clone's working tree. */
  clonePath(repoId: string, fieldPath = "/repo"): string {
    return path.join(this.repoDir(repoId, fieldPath), "repo");
  }

  /** The repository's lock file. */
  lockPath(repoId: string): string {
    return path.join(this.repoDir(repoId), ".lock");
  }

  /** The directory holding a task's worktree and metadata. */
  taskDir(taskId: string, fieldPath = "/task"): string {
    return path.join(this.tasksDir, checkId(taskId, "task", fieldPath));
  }

  /** The task's worktree. */
  worktreePath(taskId: string, fieldPath = "/task"): string {
    return path.join(this.taskDir(taskId, fieldPath), "repo");
  }

  /** The task's metadata file (beside, not inside, the worktree, so it is never committed). */
  taskMetaPath(taskId: string): string {
    return path.join(this.taskDir(taskId), "task.json");
  }

  /** The branch of a task. */
  branch(taskId: string): string {
    return taskBranch(checkId(taskId, "task", "/task"));
  }
}

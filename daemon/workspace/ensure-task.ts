import { ActionError } from "../../protocol/errors.js";
import type { WorkspaceDeps } from "./deps.js";
import type { WorkContext } from "./git-helpers.js";
import { createTask, loadTask, type CreateTaskParams } from "./tasks.js";

/** A task's worktree ready to work in, and whether this call created it. */
export interface EnsuredTask {
  task: string;
  repo: string;
  branch: string;
  path: string;
  created: boolean;
}

/**
 * The task if it exists (its `repo` must then match; `base` is ignored), else a new one as
 * tasks.create makes it: what tasks.run starts from.
 */
export async function ensureTask(deps: WorkspaceDeps, params: CreateTaskParams, ctx: WorkContext = {}): Promise<EnsuredTask> {
  const existing = await loadTask(deps, params.task).catch((err: unknown) => {
    if (err instanceof ActionError && err.code === "not_found" && !err.message.includes("without task.json")) return undefined;
    throw err;
  });
  if (existing) {
    if (params.repo !== undefined && params.repo !== existing.repo) {
      throw new ActionError("conflict", `task ${params.task} belongs to repository ${existing.repo}, not ${params.repo}`, {
        path: "/repo",
        details: { repo: existing.repo },
      });
    }
    return { task: existing.task, repo: existing.repo, branch: existing.branch, path: existing.path, created: false };
  }
  const made = await createTask(deps, params, ctx);
  return { task: made.task, repo: made.repo, branch: made.branch, path: made.path, created: true };
}

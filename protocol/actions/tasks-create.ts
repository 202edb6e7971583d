import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { GitRef, LockWaitMs, LockWaitParams, RepoId, TaskId, TaskInfo } from "../workspace.js";

export const tasksCreate = defineAction({
  name: "tasks.create",
  scope: "manage",
  summary: "Create a task: a git worktree at <root>/tasks/<task>/repo on a new branch task-<task> off base (default the clone's HEAD).",
  params: Type.Object(
    { task: TaskId, repo: Type.Optional(RepoId), base: Type.Optional(GitRef), ...LockWaitParams },
    { additionalProperties: false },
  ),
  result: Type.Composite([TaskInfo, Type.Object({ lockWaitMs: LockWaitMs })]),
});

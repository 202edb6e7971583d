import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { LockWaitMs, LockWaitParams, TaskId } from "../workspace.js";

export const tasksRemove = defineAction({
  name: "tasks.remove",
  scope: "manage",
  summary: "Remove a task's worktree; its branch is deleted only when merged (or with force, which also discards uncommitted changes).",
  params: Type.Object({ task: TaskId, force: Type.Optional(Type.Boolean()), ...LockWaitParams }, { additionalProperties: false }),
  result: Type.Object({
    task: Type.String(),
    repo: Type.String(),
    branch: Type.String(),
    branchDeleted: Type.Boolean(),
    lockWaitMs: LockWaitMs,
  }),
});

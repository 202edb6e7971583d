import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { GitRef, LockWaitMs, LockWaitParams, TaskId } from "../workspace.js";

export const tasksMerge = defineAction({
  name: "tasks.merge",
  scope: "manage",
  summary:
    "Merge a task's branch into a branch (default the clone's) with a merge commit under the repository lock; a conflict is aborted and its files reported.",
  params: Type.Object({ task: TaskId, into: Type.Optional(GitRef), ...LockWaitParams }, { additionalProperties: false }),
  result: Type.Object({
    task: Type.String(),
    branch: Type.String(),
    into: Type.String(),
    merged: Type.Boolean({ description: "false when into already contained the task branch" }),
    commit: Type.String(),
    lockWaitMs: LockWaitMs,
  }),
});

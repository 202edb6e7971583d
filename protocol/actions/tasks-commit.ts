import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { LockWaitMs, LockWaitParams, TaskId } from "../workspace.js";

export const tasksCommit = defineAction({
  name: "tasks.commit",
  scope: "manage",
  summary:
    "Commit everything in a task's worktree except the root .env (git add -A, explicit reset of .env, commit); nothing to commit → committed:false.",
  params: Type.Object(
    { task: TaskId, message: Type.String({ minLength: 1, maxLength: 65536 }), ...LockWaitParams },
    { additionalProperties: false },
  ),
  result: Type.Object({
    task: Type.String(),
    branch: Type.String(),
    committed: Type.Boolean(),
    commit: Type.Optional(Type.String()),
    files: Type.Array(Type.String(), { description: "paths in the commit (first 200)" }),
    fileCount: Type.Integer({ minimum: 0 }),
    lockWaitMs: LockWaitMs,
  }),
});

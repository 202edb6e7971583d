import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { EnvMap, JobDeadline, JobStartOptions } from "../common.js";
import { GitRef, LockWaitParams, RepoId, TaskId } from "../workspace.js";
import { ProcessStartResult } from "./shell.js";

export const tasksRun = defineAction({
  name: "tasks.run",
  scope: "manage",
  summary:
    "Run a command (an external coder) in a task's worktree as a job, creating the task first if needed; when it succeeds, commit the worktree like tasks.commit.",
  params: Type.Object(
    {
      task: TaskId,
      /** Used only when the task does not exist yet (tasks.create's `repo` and `base`). */
      repo: Type.Optional(RepoId),
      base: Type.Optional(GitRef),
      command: Type.Union([
        Type.String({ minLength: 1, maxLength: 131072 }),
        Type.Array(Type.String({ maxLength: 131072 }), { minItems: 1, maxItems: 4096 }),
      ]),
      /** The commit message; default "tasks.run: <command>". */
      message: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
      env: Type.Optional(EnvMap),
      ...JobDeadline,
      stdin: Type.Optional(Type.Union([Type.String({ maxLength: 1048576 }), Type.Boolean()])),
      ...LockWaitParams,
      ...JobStartOptions,
    },
    { additionalProperties: false },
  ),
  result: ProcessStartResult,
});

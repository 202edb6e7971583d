import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { LockWaitMs, LockWaitParams, RepoId, TaskId } from "../workspace.js";

/** NAME → value; values are one line (no newline, CR or NUL) and are never echoed back or logged. */
export const SecretValues = Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }), Type.String({ maxLength: 65536 }), {
  maxProperties: 1000,
});

export const secretsWrite = defineAction({
  name: "secrets.write",
  scope: "manage",
  summary:
    "Replace the root .env of a repository's clone or of a task's worktree (mode 0600); refused when .env is tracked. Only names come back.",
  params: Type.Object(
    {
      repo: Type.Optional(
        Type.String({ ...RepoId, description: "the repository whose clone gets the .env; give exactly one of repo and task" }),
      ),
      task: Type.Optional(
        Type.String({ ...TaskId, description: "the task whose worktree gets the .env; give exactly one of repo and task" }),
      ),
      values: SecretValues,
      ...LockWaitParams,
    },
    { additionalProperties: false, description: "Exactly one of repo or task names the .env to replace." },
  ),
  result: Type.Object({
    repo: Type.String(),
    task: Type.Optional(Type.String()),
    path: Type.String(),
    names: Type.Array(Type.String()),
    lockWaitMs: LockWaitMs,
  }),
});

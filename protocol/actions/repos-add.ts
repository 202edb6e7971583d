import { Type } from "@sinclair/typebox";
import { AbsolutePath, JobStartOptions, JobStartResult } from "../common.js";
import { defineAction } from "../define.js";
import { LockWaitParams, RepoId } from "../workspace.js";

export const reposAdd = defineAction({
  name: "repos.add",
  scope: "manage",
  summary:
    "Create a repository's shared clone (git clone from url or path, or git init when neither) as a job; /.env is pinned in its info/exclude.",
  params: Type.Object(
    {
      repo: Type.Optional(RepoId),
      url: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          description: "https://, ssh://, git://, file:// or git@host:owner/repo.git; never with credentials",
        }),
      ),
      path: Type.Optional(AbsolutePath),
      ...LockWaitParams,
      ...JobStartOptions,
    },
    { additionalProperties: false },
  ),
  result: JobStartResult,
});

import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { LockWaitParams, RepoId } from "../workspace.js";
import { JobStartOptions, JobStartResult } from "../common.js";

export const reposBundle = defineAction({
  name: "repos.bundle",
  scope: "manage",
  summary:
    "Write a git bundle of a repository's full history (every branch, task branches included) for recovery, as a job; job.result.path is the file.",
  params: Type.Object({ repo: Type.Optional(RepoId), ...LockWaitParams, ...JobStartOptions }, { additionalProperties: false }),
  result: JobStartResult,
});

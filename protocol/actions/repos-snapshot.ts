import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { GitRef, RepoId } from "../workspace.js";
import { JobStartOptions, JobStartResult } from "../common.js";

export const reposSnapshot = defineAction({
  name: "repos.snapshot",
  scope: "manage",
  summary:
    "Archive the tree of a repository at a ref (default the clone's HEAD) as a tar.gz in the state directory, as a job; job.result.path is the file.",
  params: Type.Object({ repo: Type.Optional(RepoId), ref: Type.Optional(GitRef), ...JobStartOptions }, { additionalProperties: false }),
  result: JobStartResult,
});

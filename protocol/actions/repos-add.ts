import { Type } from "@sinclair/typebox";
import { AbsolutePath, IdempotencyKey, JobStatus } from "../common.js";
import { defineAction } from "../define.js";
import { RepoId } from "../workspace.js";

/** Fields of every workspace action that runs as a job (clone, snapshot, bundle). */
export const WorkspaceJobOptions = {
  key: Type.Optional(IdempotencyKey),
  wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000, description: "wait up to this many ms for the job to end; its result is then in job.result" })),
};

/** Reply of a workspace job action: the job's status (job.result holds the outcome once it succeeded). */
export const WorkspaceJobResult = Type.Object({ job: JobStatus });

export const reposAdd = defineAction({
  name: "repos.add",
  scope: "manage",
  summary: "Create a repository's shared clone (git clone from url or path, or git init when neither) as a job; /.env is pinned in its info/exclude.",
  params: Type.Object(
    {
      repo: Type.Optional(RepoId),
      url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: "https://, ssh://, git://, file:// or git@host:owner/repo.git; never with credentials" })),
      path: Type.Optional(AbsolutePath),
      ...WorkspaceJobOptions,
    },
    { additionalProperties: false },
  ),
  result: WorkspaceJobResult,
});

import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, IdempotencyKey, JobStatus } from "../common.js";

/** Fields every files.* job shares with shell: a deadline, an idempotency key, and an optional wait. */
export const FileJobOptions = {
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600 * 1000 })),
  wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000 })),
  key: Type.Optional(IdempotencyKey),
};

/** Reply of files.download and files.extract: the job (finished, with `result`, when `wait` saw it end). */
export const FileJobResult = Type.Object({ job: JobStatus });

export const filesDownload = defineAction({
  name: "files.download",
  scope: "manage",
  summary: "Download a URL or a GitHub release asset to a file as a managed job, with an optional SHA-256 check.",
  params: Type.Object(
    {
      url: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
      github: Type.Optional(
        Type.Object(
          {
            repo: Type.String({ minLength: 3, maxLength: 140 }),
            tag: Type.String({ minLength: 1, maxLength: 256 }),
            asset: Type.String({ minLength: 1, maxLength: 512 }),
          },
          { additionalProperties: false },
        ),
      ),
      dest: AbsolutePath,
      sha256: Type.Optional(Type.String({ pattern: "^(sha256:)?[0-9a-fA-F]{64}$" })),
      overwrite: Type.Optional(Type.Boolean()),
      ...FileJobOptions,
    },
    { additionalProperties: false },
  ),
  result: FileJobResult,
});

import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, JobDeadline, JobStartOptions, JobStartResult } from "../common.js";

export const filesExtract = defineAction({
  name: "files.extract",
  scope: "manage",
  summary: "Extract a tar, tar.gz, tar.xz, tar.zst or zip into a new directory as a managed job, refusing unsafe entries.",
  params: Type.Object(
    {
      archive: AbsolutePath,
      dest: AbsolutePath,
      format: Type.Optional(
        Type.Union([Type.Literal("tar"), Type.Literal("tar.gz"), Type.Literal("tar.xz"), Type.Literal("tar.zst"), Type.Literal("zip")]),
      ),
      strip: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
      /** Create missing parent directories of `dest` (never `dest` itself). */
      parents: Type.Optional(Type.Boolean()),
      ...JobDeadline,
      ...JobStartOptions,
    },
    { additionalProperties: false },
  ),
  result: JobStartResult,
});

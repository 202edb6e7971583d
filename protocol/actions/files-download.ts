import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, JobDeadline, JobStartOptions, JobStartResult } from "../common.js";

export const filesDownload = defineAction({
  name: "files.download",
  scope: "manage",
  summary:
    "Download a URL or a GitHub release asset to a file as a managed job, with an optional SHA-256 check (a hash, or one taken from a sums file).",
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
      /** Instead of `sha256`: take it from a sums file (`SHA256SUMS`, `checksums.txt`) fetched first. */
      sha256sums: Type.Optional(
        Type.Object(
          {
            /** The sums file's URL. */
            url: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
            /** With `github`: the sums file is this asset (a glob matching one) of the same release. */
            asset: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
            /** The entry to look up; default: the downloaded file's name (the URL's last segment, or the asset's name). */
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          },
          { additionalProperties: false },
        ),
      ),
      overwrite: Type.Optional(Type.Boolean()),
      /** Create missing directories on the way to the file (for a `dest` ending in `/`, that directory too). */
      parents: Type.Optional(Type.Boolean()),
      ...JobDeadline,
      ...JobStartOptions,
    },
    { additionalProperties: false },
  ),
  result: JobStartResult,
});

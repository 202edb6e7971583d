import { Type } from "@sinclair/typebox";
import { AbsolutePath, JobDeadline, JobStartOptions, JobStatus } from "../common.js";
import { defineAction } from "../define.js";

/** What a client learns about a prepared environment; also the `environment` of a succeeded prepare job's result. */
export const EnvironmentSummary = Type.Object({
  workspace: Type.String(),
  system: Type.String(),
  cacheKey: Type.String(),
  storePath: Type.String(),
  packages: Type.Optional(Type.Array(Type.String())),
  flake: Type.Optional(Type.String()),
  nixpkgs: Type.Optional(
    Type.Object({
      url: Type.String(),
      rev: Type.Optional(Type.String()),
      narHash: Type.Optional(Type.String()),
      lastModified: Type.Optional(Type.Integer()),
    }),
  ),
  variables: Type.Array(Type.String(), { description: "names of the variables a job gets (values via hotline env)" }),
  pathPrepend: Type.Array(Type.String()),
  hookRan: Type.Boolean(),
  preparedAt: Type.String(),
});

/** A ready answer's store paths copied back from the binary cache they were pushed to, nothing built. */
export const Restoration = Type.Object(
  {
    from: Type.String({ description: "the binary cache (environmentCache.push when it was prepared)" }),
    paths: Type.Integer({ minimum: 0, description: "store paths copied back" }),
  },
  { description: "set when the store had lost the environment's paths and they were restored from the binary cache instead of built" },
);

export const prepare = defineAction({
  name: "prepare",
  scope: "manage",
  summary: "Prepare a workspace's Nix environment from Nixpkgs packages or a flake; jobs inside the workspace get it.",
  params: Type.Object(
    {
      workspace: AbsolutePath,
      packages: Type.Optional(
        Type.Array(Type.String({ maxLength: 200 }), {
          maxItems: 500,
          description: "Nixpkgs attribute paths, e.g. nodejs, python3Packages.requests",
        }),
      ),
      flake: Type.Optional(
        Type.String({ minLength: 1, maxLength: 500, description: 'A flake ref relative to the workspace: ".", ".#dev", ".hotline/nix"' }),
      ),
      updateLock: Type.Optional(Type.Boolean({ description: "Allow Nix to change an existing flake.lock" })),
      ...JobStartOptions,
      ...JobDeadline,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    ready: Type.Boolean(),
    environment: Type.Optional(EnvironmentSummary),
    restored: Type.Optional(Restoration),
    job: Type.Optional(JobStatus),
  }),
});

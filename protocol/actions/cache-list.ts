import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

/** Where a prepared environment was pushed (config environmentCache.push), whether it worked, and why not. */
export const Publication = Type.Object({
  published: Type.Boolean(),
  to: Type.String({ description: "the push store URL" }),
  signed: Type.Boolean(),
  paths: Type.Integer({ minimum: 0 }),
  reason: Type.Optional(Type.String({ description: "why the push failed" })),
  at: Type.String(),
});

export const CacheEntryInfo = Type.Object({
  cacheKey: Type.String(),
  system: Type.String(),
  packages: Type.Optional(Type.Array(Type.String())),
  flake: Type.Optional(Type.String()),
  storePath: Type.String(),
  valid: Type.Boolean({ description: "whether the environment's store path is still in the Nix store" }),
  closureBytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  workspaces: Type.Array(Type.String(), { description: "prepared workspaces using this entry (it is never pruned while any does)" }),
  createdAt: Type.String(),
  lastUsedAt: Type.String(),
  publication: Type.Optional(Publication),
});

export const cacheList = defineAction({
  name: "cache.list",
  scope: "observe",
  summary: "The prepared-environment cache: each recipe, the workspaces using it, its closure size, last use and where it was published.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ entries: Type.Array(CacheEntryInfo) }),
});

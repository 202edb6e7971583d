import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

export const cachePrune = defineAction({
  name: "cache.prune",
  scope: "manage",
  summary:
    "Remove environment cache entries no prepared workspace uses (with their GC roots), sparing the newest `keep` and those used within `olderThanMs`.",
  params: Type.Object(
    {
      olderThanMs: Type.Optional(Type.Integer({ minimum: 0, description: "only entries unused for longer than this (default 0)" })),
      keep: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 1_000_000, description: "the newest N unused entries are kept (default 0)" }),
      ),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    removed: Type.Array(Type.Object({ cacheKey: Type.String(), system: Type.String(), lastUsedAt: Type.String() })),
    kept: Type.Integer({ minimum: 0 }),
  }),
});

import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

export const stateInfo = defineAction({
  name: "state.info",
  scope: "observe",
  summary: "What this daemon is: version, build, system, user, directories, job counts, activity, Nix, actions.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({
    name: Type.Literal("hotline"),
    version: Type.String(),
    protocolVersion: Type.Integer(),
    commit: Type.String(),
    node: Type.String(),
    system: Type.String(),
    user: Type.String(),
    pid: Type.Integer(),
    startedAt: Type.String(),
    uptimeMs: Type.Integer(),
    directories: Type.Object({ state: Type.String(), config: Type.String(), cache: Type.String() }),
    jobs: Type.Record(Type.String(), Type.Integer()),
    output: Type.Object({ budgetBytes: Type.Integer(), usedBytes: Type.Integer() }, { description: "job output kept on disk, against the budget" }),
    lastActivity: Type.String(),
    idleMs: Type.Integer(),
    nix: Type.Object({ available: Type.Boolean(), version: Type.Optional(Type.String()), reason: Type.Optional(Type.String()) }),
    scope: Type.String(),
    actions: Type.Array(Type.Object({ name: Type.String(), scope: Type.String(), summary: Type.String() })),
  }),
});

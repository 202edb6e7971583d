import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

export const stateCatalog = defineAction({
  name: "state.catalog",
  scope: "observe",
  summary: "The Nix inputs prepare uses: the default nixpkgs pin, the system, and the workspaces prepared with their pins.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({
    system: Type.String(),
    nixpkgs: Type.Object({
      url: Type.String(),
      rev: Type.Optional(Type.String()),
      narHash: Type.Optional(Type.String()),
      lastModified: Type.Optional(Type.Integer()),
    }),
    inputs: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    workspaces: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  }),
});

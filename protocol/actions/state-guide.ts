import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

export const stateGuide = defineAction({
  name: "state.guide",
  scope: "observe",
  summary: "The agent guide embedded in this build, with its version and the SHA-256 of the exact text returned.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ version: Type.String(), sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }), text: Type.String() }),
});

import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

export const tokensCreate = defineAction({
  name: "tokens.create",
  scope: "manage",
  summary: "Issue a new token with a scope and a lifetime (24 h unless ttlMs says otherwise); only its hash is stored.",
  params: Type.Object(
    {
      scope: Type.Union([Type.Literal("manage"), Type.Literal("observe")]),
      ttlMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 366 * 24 * 3600 * 1000 })),
      label: Type.Optional(Type.String({ maxLength: 200 })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ token: Type.String(), scope: Type.String(), expiresAt: Type.String(), id: Type.String() }),
});

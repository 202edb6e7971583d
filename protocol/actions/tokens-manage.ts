import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

/** An issued token as tokens.list and tokens.revoke show it: never the token or its hash. */
export const TokenInfo = Type.Object({
  id: Type.String(),
  scope: Type.Union([Type.Literal("manage"), Type.Literal("observe")]),
  createdAt: Type.String(),
  expiresAt: Type.Optional(Type.String()),
  label: Type.Optional(Type.String()),
  /** What the token may be presented to: absent for the API (WebSocket, /mcp, pages); `ssh` or `preview` otherwise. */
  use: Type.Optional(Type.Union([Type.Literal("ssh"), Type.Literal("preview"), Type.Literal("cdp")])),
  /** The one port a preview token opens. */
  port: Type.Optional(Type.Integer()),
  /** The id of the token that issued this one (`primary` for the token file's). */
  issuer: Type.Optional(Type.String()),
});

export const tokensList = defineAction({
  name: "tokens.list",
  scope: "manage",
  summary: "The issued tokens that are still valid: id, scope, createdAt, expiresAt, label (never the secret).",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ tokens: Type.Array(TokenInfo) }),
});

export const tokensRevoke = defineAction({
  name: "tokens.revoke",
  scope: "manage",
  summary: "Revoke an issued token at once: it is refused from now on and its open connections are closed (4001).",
  params: Type.Object({ tokenId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  result: Type.Object({ revoked: TokenInfo }),
});

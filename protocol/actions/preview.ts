import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

/** Lifetime of a preview link: 15 minutes unless `ttlMs` says otherwise, at most a day. */
export const DEFAULT_PREVIEW_TTL_MS = 15 * 60 * 1000;
export const MAX_PREVIEW_TTL_MS = 24 * 3600 * 1000;

/** The query parameter that carries a preview link's token; the daemon's own, so an app's `token` passes untouched. */
export const PREVIEW_QUERY_PARAM = "hotline_preview_token";
/** The cookie the daemon sets on a preview host in exchange for the query parameter. */
export const PREVIEW_COOKIE = "hotline_preview";
/** The header an API client may send the token in instead (stripped like the cookie). */
export const PREVIEW_HEADER = "x-hotline-preview-token";

export const previewOpen = defineAction({
  name: "preview.open",
  scope: "manage",
  summary: "A short-lived link to a port in the sandbox (a dev server), proxied over HTTP and WebSocket; the token opens that port only.",
  params: Type.Object(
    {
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
      ttlMs: Type.Optional(Type.Integer({ minimum: 10_000, maximum: MAX_PREVIEW_TTL_MS })),
      /** Where the link lands (default `/`); may carry a query of its own. */
      path: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: "^/" })),
      /** Wait up to this long for the port to listen before answering (0, the default: answer at once). */
      waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    },
    { additionalProperties: false },
  ),
  result: Type.Union([
    Type.Object({
      available: Type.Literal(true),
      url: Type.String(),
      expiresAt: Type.String(),
      tokenId: Type.String(),
      port: Type.Integer(),
      /** Whether something listens on the port now (the link works either way: it waits). */
      listening: Type.Boolean(),
    }),
    Type.Object({ available: Type.Literal(false), reason: Type.String() }),
  ]),
});

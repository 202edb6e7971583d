import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, JobId, JobStatus } from "../common.js";

/** Lifetime of a browser link: 15 minutes unless `ttlMs` says otherwise, at most an hour. */
export const DEFAULT_LINK_TTL_MS = 15 * 60 * 1000;
export const MAX_LINK_TTL_MS = 60 * 60 * 1000;

const LinkTtl = Type.Optional(Type.Integer({ minimum: 10_000, maximum: MAX_LINK_TTL_MS }));
const Size = Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 }));
/** Where a link cannot be served: a reason instead of an error (the daemon itself is fine). */
const Unavailable = Type.Object({ available: Type.Literal(false), reason: Type.String() });

export const terminalOpen = defineAction({
  name: "terminal.open",
  scope: "manage",
  summary: "Start (or with `job`, reattach to) a terminal job and get a short-lived browser link to it (webTerminalUrl).",
  params: Type.Object(
    {
      job: Type.Optional(JobId),
      cwd: Type.Optional(AbsolutePath),
      command: Type.Optional(Type.String({ minLength: 1, maxLength: 131072 })),
      cols: Size,
      rows: Size,
      ttlMs: LinkTtl,
    },
    { additionalProperties: false },
  ),
  result: Type.Union([
    Type.Object({
      available: Type.Literal(true),
      webTerminalUrl: Type.String(),
      expiresAt: Type.String(),
      tokenId: Type.String(),
      job: JobStatus,
    }),
    Unavailable,
  ]),
});

export const consoleOpen = defineAction({
  name: "console.open",
  scope: "observe",
  summary: "A short-lived browser link to the operator console (live job list and output), with the scope of the asking token.",
  params: Type.Object({ ttlMs: LinkTtl }, { additionalProperties: false }),
  result: Type.Union([
    Type.Object({
      available: Type.Literal(true),
      consoleUrl: Type.String(),
      expiresAt: Type.String(),
      tokenId: Type.String(),
      scope: Type.Union([Type.Literal("manage"), Type.Literal("observe")]),
    }),
    Unavailable,
  ]),
});

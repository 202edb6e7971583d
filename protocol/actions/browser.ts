import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, JobId, JobStatus } from "../common.js";
import { SshAccessFields } from "./ssh.js";

/** Lifetime of a browser link: 15 minutes unless `ttlMs` says otherwise, at most an hour. */
export const DEFAULT_LINK_TTL_MS = 15 * 60 * 1000;
export const MAX_LINK_TTL_MS = 60 * 60 * 1000;

const LinkTtl = Type.Optional(Type.Integer({ minimum: 10_000, maximum: MAX_LINK_TTL_MS }));
/** A link's scope when asked for: at most the asking token's, which is the default. */
export const LinkScope = Type.Optional(
  Type.Union([Type.Literal("manage"), Type.Literal("observe")], {
    description: "the link's scope, at most the asking token's (its default); observe: watch only",
  }),
);
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
      /** observe: a watch-only web link and no SSH credential (an SSH session types). */
      scope: LinkScope,
    },
    { additionalProperties: false },
  ),
  result: Type.Union([
    Type.Object({
      available: Type.Literal(true),
      webTerminalUrl: Type.Optional(Type.String()),
      /** Why there is no webTerminalUrl (the SSH fields may still be there). */
      webTerminalUnavailable: Type.Optional(Type.String()),
      /** The web link's expiry, else the SSH credential's (kept for older clients; each has its own field). */
      expiresAt: Type.String(),
      webTerminalExpiresAt: Type.Optional(Type.String({ description: "when the web link expires" })),
      /** The web link's scope. */
      scope: Type.Union([Type.Literal("manage"), Type.Literal("observe")]),
      tokenId: Type.Optional(Type.String()),
      job: JobStatus,
      sshCommand: Type.Optional(SshAccessFields.sshCommand),
      sshHost: Type.Optional(SshAccessFields.sshHost),
      sshPort: Type.Optional(SshAccessFields.sshPort),
      sshUser: Type.Optional(SshAccessFields.sshUser),
      sshKnownHosts: Type.Optional(SshAccessFields.sshKnownHosts),
      sshHostKeyFingerprint: Type.Optional(SshAccessFields.sshHostKeyFingerprint),
      sshTokenId: Type.Optional(Type.String()),
      sshExpiresAt: Type.Optional(Type.String({ description: "when the SSH credential expires" })),
      /** Why there is no sshCommand (SSH off or not started); the web link still works. */
      sshUnavailable: Type.Optional(Type.String()),
    }),
    Unavailable,
  ]),
});

export const consoleOpen = defineAction({
  name: "console.open",
  scope: "observe",
  summary:
    "A short-lived browser link to the operator console (live job list and output), with the asking token's scope or, with scope, a lower one.",
  params: Type.Object({ ttlMs: LinkTtl, scope: LinkScope }, { additionalProperties: false }),
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

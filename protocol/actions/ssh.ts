import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

/** Lifetime of an SSH credential: 15 minutes unless `ttlMs` says otherwise, from 10 s to an hour. */
export const DEFAULT_SSH_TTL_MS = 15 * 60 * 1000;
export const MAX_SSH_TTL_MS = 60 * 60 * 1000;

export const SshTtl = Type.Optional(Type.Integer({ minimum: 10_000, maximum: MAX_SSH_TTL_MS }));

/** How to reach the daemon's SSH server with one credential (ssh.open; terminal.open adds them too). */
export const SshAccessFields = {
  sshCommand: Type.String({ description: "one line to paste, no terminal or known_hosts needed: it pins the host key (OpenSSH 8.5+)" }),
  sshHost: Type.String(),
  sshPort: Type.Integer(),
  sshUser: Type.String({ description: "the credential itself (an ssh-only token)" }),
  sshKnownHosts: Type.String({ description: "one known_hosts line for the host key" }),
  sshHostKeyFingerprint: Type.String({ description: "SHA256:… as ssh prints it" }),
};

export const sshOpen = defineAction({
  name: "ssh.open",
  scope: "manage",
  summary:
    "A short-lived SSH credential (15 min unless ttlMs): a pasteable sshCommand for ssh, scp, sftp, VS Code or JetBrains, and the host key.",
  params: Type.Object({ ttlMs: SshTtl }, { additionalProperties: false }),
  result: Type.Union([
    Type.Object({ available: Type.Literal(true), ...SshAccessFields, expiresAt: Type.String(), tokenId: Type.String() }),
    Type.Object({ available: Type.Literal(false), reason: Type.String() }),
  ]),
});

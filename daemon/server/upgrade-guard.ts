import type { IncomingMessage } from "node:http";
import type { Scope } from "../../protocol/define.js";
import type { TokenStore } from "../tokens/store.js";

export type UpgradeVerdict = { ok: true; scope: Scope; tokenId: string; expiresAt?: number } | { ok: false; status: 401 | 403; code: "unauthorized" | "forbidden"; message: string };

/**
 * Decides whether an HTTP upgrade may become a connection. A browser always sends Origin, so any
 * Origin not explicitly allowed is refused: a web page in the sandbox must not reach the daemon.
 */
export function checkUpgrade(req: IncomingMessage, tokens: TokenStore, allowedOrigins: readonly string[]): UpgradeVerdict {
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedOrigins.includes(origin)) {
    return { ok: false, status: 403, code: "forbidden", message: `origin ${origin} is not allowed (allowedOrigins)` };
  }
  const header = req.headers.authorization;
  const token = header?.startsWith("Bearer ") ? header.slice("Bearer ".length).trim() : undefined;
  const check = tokens.check(token);
  if (!check.ok) {
    const why = check.reason === "missing" ? "no token: send Authorization: Bearer <token from <config>/token>" : check.reason === "expired" ? "the token has expired" : "wrong token";
    return { ok: false, status: 401, code: "unauthorized", message: why };
  }
  return { ok: true, scope: check.scope, tokenId: check.id, ...(check.expiresAt !== undefined ? { expiresAt: check.expiresAt } : {}) };
}

import type { IncomingMessage } from "node:http";
import type { Scope } from "../../protocol/define.js";
import type { TokenStore } from "../tokens/store.js";
import { linkTokenOf } from "./link-protocol.js";
import type { PageAccess } from "./page-access.js";

export type UpgradeVerdict =
  /** `token` is the secret that was accepted: for a caller that acts with it (never log it). */
  | { ok: true; scope: Scope; tokenId: string; token: string; expiresAt?: number }
  | { ok: false; status: 401 | 403; code: "unauthorized" | "forbidden"; message: string };

/** The token of an `Authorization: Bearer <token>` header, if the request has one. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length).trim() : undefined;
}

/**
 * Decides whether an HTTP upgrade may become a connection. A browser always sends Origin, so any
 * Origin not explicitly allowed is refused: a web page in the sandbox must not reach the daemon.
 */
export function checkUpgrade(
  req: IncomingMessage,
  tokens: TokenStore,
  allowedOrigins: readonly string[],
  pages?: PageAccess,
): UpgradeVerdict {
  const origin = req.headers.origin;
  const linkToken = pages ? linkTokenOf(req) : undefined;
  if (linkToken !== undefined && pages) {
    // A browser page's socket: only from the daemon's own page, under a host the daemon answers for.
    const badHost = pages.refusedHost(req);
    if (badHost) return { ok: false, status: 403, code: "forbidden", message: badHost };
    if (!pages.ownOrigin(origin, req))
      return {
        ok: false,
        status: 403,
        code: "forbidden",
        message: `origin ${origin ?? "(none)"} is not this daemon's page origin; a link token is accepted only from the daemon's own pages`,
      };
  } else if (origin !== undefined && !allowedOrigins.includes(origin)) {
    return { ok: false, status: 403, code: "forbidden", message: `origin ${origin} is not allowed (allowedOrigins)` };
  }
  const token = linkToken ?? bearerToken(req);
  const check = tokens.check(token);
  if (!check.ok) {
    const why =
      check.reason === "missing"
        ? "no token: send Authorization: Bearer <token from <config>/token>"
        : check.reason === "expired"
          ? "the token has expired"
          : "wrong token";
    return { ok: false, status: 401, code: "unauthorized", message: why };
  }
  if (check.pageOnly && linkToken === undefined)
    return {
      ok: false,
      status: 403,
      code: "forbidden",
      message: "this is a browser link's token: it opens its page only; use a token from tokens.create (or the token file) here",
    };
  // A check passes only for a presented token.
  return {
    ok: true,
    scope: check.scope,
    tokenId: check.id,
    token: token!,
    ...(check.expiresAt !== undefined ? { expiresAt: check.expiresAt } : {}),
  };
}

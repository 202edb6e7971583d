import { createHash } from "node:crypto";
import { PREVIEW_COOKIE, PREVIEW_QUERY_PARAM } from "../../protocol/actions/preview.js";
import type { TokenStore } from "../tokens/store.js";

/** Why a preview request was refused: no token, an unknown or altered one, ended ones, or one for another port. */
export type RefusalReason = "none" | "wrong" | "expired" | "revoked" | "port";

export type PreviewVerdict = { ok: true; tokenId: string; expiresAt: number } | { ok: false; reason: RefusalReason; tokenPort?: number };

/** Where the request carried its token: the link's query (exchanged for a cookie), the header, or the cookie. */
export type TokenSource = "query" | "header" | "cookie";

/** Accepted tokens remembered (by hash) so a page's hundred asset requests do not each walk the token file. */
const CACHE_ENTRIES = 512;

function decodeParam(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // not a token then: the gate says "wrong"
  }
}

/** The request URL without the daemon's query parameter, every other byte of it as sent (Vite's `token` included). */
export function stripQueryToken(url: string): { url: string; token?: string } {
  const q = url.indexOf("?");
  if (q < 0) return { url };
  let token: string | undefined;
  const kept = url
    .slice(q + 1)
    .split("&")
    .filter((pair) => {
      const eq = pair.indexOf("=");
      if ((eq < 0 ? pair : pair.slice(0, eq)) !== PREVIEW_QUERY_PARAM) return true;
      token ??= decodeParam(eq < 0 ? "" : pair.slice(eq + 1));
      return false;
    });
  const path = url.slice(0, q);
  return { url: kept.length ? `${path}?${kept.join("&")}` : path, ...(token !== undefined ? { token } : {}) };
}

/** A Cookie header without the daemon's cookie (undefined when nothing else is left), and the token it held. */
export function stripCookie(header: string | undefined): { cookie?: string; token?: string } {
  if (header === undefined) return {};
  let token: string | undefined;
  const kept = header.split(";").filter((pair) => {
    const eq = pair.indexOf("=");
    if (pair.slice(0, eq < 0 ? undefined : eq).trim() !== PREVIEW_COOKIE) return true;
    token ??= pair.slice(eq + 1).trim();
    return false;
  });
  const cookie = kept.join(";").trim();
  return { ...(cookie ? { cookie } : {}), ...(token !== undefined ? { token } : {}) };
}

/** The token a request presents, and where: the query wins (a new link replaces an old cookie), then the header, then the cookie. */
export function presentedToken(header: string | undefined, queryToken: string | undefined, cookieToken: string | undefined) {
  if (queryToken) return { token: queryToken, source: "query" as TokenSource };
  if (header) return { token: header.trim(), source: "header" as TokenSource };
  if (cookieToken) return { token: cookieToken, source: "cookie" as TokenSource };
  return undefined;
}

/** The Set-Cookie values that trade the link's token for a cookie on this host, for the rest of its life. */
export function previewCookies(token: string, expiresAt: number, secure: boolean, now = Date.now()): string[] {
  const maxAge = Math.max(0, Math.floor((expiresAt - now) / 1000));
  const base = `${PREVIEW_COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly`;
  // SameSite=None needs Secure; Partitioned (CHIPS) is the cookie Chromium still keeps inside a
  // cross-site iframe when third-party cookies are blocked. On a plain-http template host neither
  // applies: Lax, so the preview works as a page of its own but not framed by another site.
  if (!secure) return [`${base}; SameSite=Lax`];
  // `*.localhost` over http counts as secure in Chromium and Firefox; the Lax twin is for a browser that disagrees.
  return [`${base}; SameSite=None; Secure; Partitioned`, `${base}; SameSite=Lax`];
}

interface GateEntry {
  id: string;
  port: number;
  expiresAt: number;
}

/** The last token a client connection was let in with (see PreviewGate.check). */
export interface GateMemo {
  token?: string;
  entry?: GateEntry;
  generation?: number;
}

/**
 * Decides preview requests against the token store: a token opens the one port it was issued for,
 * until it expires or is revoked. Accepted tokens are cached by hash and dropped from the cache on
 * revocation; expiry is checked on every request.
 */
export class PreviewGate {
  private readonly cache = new Map<string, GateEntry>();
  /** Counts revocations: a connection's memo from before one is not trusted. */
  private generation = 0;

  constructor(private readonly tokens: TokenStore) {
    tokens.onRevoke((id) => {
      this.generation++;
      for (const [hash, entry] of this.cache) if (entry.id === id) this.cache.delete(hash);
    });
  }

  /**
   * The verdict for a token on a port. `memo` (one per client connection) remembers the last
   * token accepted there, so a keep-alive connection's next requests skip hashing it; any
   * revocation since makes it look the token up again.
   */
  check(token: string | undefined, port: number, now = Date.now(), memo?: GateMemo): PreviewVerdict {
    if (!token) return { ok: false, reason: "none" };
    const remembered = memo && memo.token === token && memo.generation === this.generation ? memo.entry : undefined;
    const hash = remembered ? "" : createHash("sha256").update(token).digest("hex");
    let entry = remembered ?? this.cache.get(hash);
    if (!entry) {
      const check = this.tokens.check(token, now, "preview");
      if (!check.ok) {
        const ended = check.reason === "wrong" ? this.tokens.endedReason(token) : undefined;
        return { ok: false, reason: ended ?? (check.reason === "missing" ? "none" : check.reason) };
      }
      if (check.port === undefined || check.expiresAt === undefined) return { ok: false, reason: "wrong" };
      entry = { id: check.id, port: check.port, expiresAt: check.expiresAt };
      if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(hash, entry);
    }
    if (entry.expiresAt <= now) {
      if (hash) this.cache.delete(hash);
      return { ok: false, reason: "expired" };
    }
    if (entry.port !== port) return { ok: false, reason: "port", tokenPort: entry.port };
    if (memo && !remembered) Object.assign(memo, { token, entry, generation: this.generation });
    return { ok: true, tokenId: entry.id, expiresAt: entry.expiresAt };
  }
}

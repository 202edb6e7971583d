import { createHash } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import type { TokenInfo as TokenInfoSchema } from "../../protocol/actions/tokens-manage.js";
import type { Scope } from "../../protocol/define.js";

/** What `tokens.list` shows of an issued token: everything but its hash (the wire shape, from protocol/). */
export type TokenInfo = Static<typeof TokenInfoSchema>;

/**
 * An issued token as the token file keeps it: its public fields, the hash of its secret, and
 * whether it is a browser link's (it opens its page only and issues nothing).
 */
export type IssuedToken = TokenInfo & { sha256: string; pageOnly?: true };

/**
 * What a token may be presented to. `api` tokens open the WebSocket, /mcp and the browser pages; an
 * `ssh` token is an SSH credential only and a `preview` token opens one port's preview only, so a
 * credential pasted into a terminal or a link handed to a person never reaches the API. A `cdp`
 * token opens the Chromium DevTools relay only (browser.open's cdpUrl carries it in its path).
 */
export type TokenUse = "api" | "ssh" | "preview" | "cdp";

/** What an issued token is bound to, beyond its scope: its use and, for a preview, its port. */
export interface TokenBinding {
  use: TokenUse;
  port?: number;
}

export type TokenCheck =
  | { ok: true; scope: Scope; id: string; expiresAt?: number; port?: number; pageOnly?: true }
  | { ok: false; reason: "missing" | "wrong" | "expired" };

/** What `create` issues: the scope, lifetime and label, what it is bound to, and who asked for it. */
export interface TokenRequest {
  scope: Scope;
  ttlMs?: number;
  label?: string;
  /** `api` unless said (see TokenUse). */
  use?: TokenUse;
  /** The one port a `preview` token opens. */
  port?: number;
  /**
   * The id of the token that asked for this one (PRIMARY_TOKEN_ID for the token file's). The new
   * token never outlives it, never has a scope above it, and dies when it is revoked.
   */
  issuer?: string;
  /** A browser link's token: accepted on its page's socket only, and it issues no tokens or links. */
  pageOnly?: true;
}

/** The id of the token in `<config>/token`: scope manage, never expires, cannot be revoked. */
export const PRIMARY_TOKEN_ID = "primary";

/** Whether `id` is a token file's token's, of any generation (`primary`, `primary.2` … see TokenTable.primaryId). */
export function isPrimaryId(id: string): boolean {
  return id === PRIMARY_TOKEN_ID || /^primary\.\d+$/.test(id);
}
/** Lifetime of an issued token when `tokens.create` names none. */
export const DEFAULT_TOKEN_TTL_MS = 24 * 3600 * 1000;
/**
 * Live issued tokens at most: console.open needs only an observe token and issues one per call, and
 * every issue rewrites the file, so without a bound a client could grow it (and each write) forever.
 */
export const MAX_LIVE_TOKENS = 1000;

export const SCOPE_RANK: Record<Scope, number> = { observe: 0, manage: 1 };

/** A token's prefix says what it is for, so one pasted in the wrong place is recognisable. */
export const TOKEN_PREFIX: Record<TokenUse, string> = { api: "hl_", ssh: "hlssh_", preview: "hlpv_", cdp: "hlcdp_" };

export const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

export function publicInfo({ sha256: _hash, pageOnly: _pageOnly, ...info }: IssuedToken): TokenInfo {
  return info;
}

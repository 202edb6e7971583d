import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Static } from "@sinclair/typebox";
import type { TokenInfo as TokenInfoSchema } from "../../protocol/actions/tokens-manage.js";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import { writeFileAtomicSync } from "../util/atomic-write.js";

/** What `tokens.list` shows of an issued token: everything but its hash (the wire shape, from protocol/). */
export type TokenInfo = Static<typeof TokenInfoSchema>;

/** An issued token as the token file keeps it: its public fields and the hash of its secret. */
type IssuedToken = TokenInfo & { sha256: string };

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
  | { ok: true; scope: Scope; id: string; expiresAt?: number; port?: number }
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
  /** The id of the token that asked for this one (PRIMARY_TOKEN_ID for the token file's). */
  issuer?: string;
}

/** The id of the token in `<config>/token`: scope manage, never expires, cannot be revoked. */
export const PRIMARY_TOKEN_ID = "primary";
/** Lifetime of an issued token when `tokens.create` names none. */
export const DEFAULT_TOKEN_TTL_MS = 24 * 3600 * 1000;
/**
 * Live issued tokens at most: console.open needs only an observe token and issues one per call, and
 * every issue rewrites the file, so without a bound a client could grow it (and each write) forever.
 */
export const MAX_LIVE_TOKENS = 1000;

/** A token's prefix says what it is for, so one pasted in the wrong place is recognisable. */
const TOKEN_PREFIX: Record<TokenUse, string> = { api: "hl_", ssh: "hlssh_", preview: "hlpv_", cdp: "hlcdp_" };

const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

/**
 * Tokens live in files only: `<config>/token` is the `manage` token (created 0600 on first start);
 * tokens issued later are kept as SHA-256 hashes in `<config>/tokens.json`, with scope and expiry.
 */
export class TokenStore {
  private readonly primaryHash: Buffer;
  private issued: IssuedToken[] = [];
  private readonly issuedPath: string;
  private readonly revokeListeners: Array<(id: string) => void> = [];

  constructor(
    configDir: string,
    private readonly maxLive = MAX_LIVE_TOKENS,
  ) {
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    const tokenPath = join(configDir, "token");
    if (!existsSync(tokenPath)) writeFileAtomicSync(tokenPath, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, fsync: true });
    chmodSync(tokenPath, 0o600);
    this.primaryHash = sha256(readFileSync(tokenPath, "utf8").trim());
    this.issuedPath = join(configDir, "tokens.json");
    if (existsSync(this.issuedPath)) this.issued = JSON.parse(readFileSync(this.issuedPath, "utf8")) as IssuedToken[];
  }

  /**
   * Checks a presented token in constant time against the primary and issued hashes, for one use: a
   * token bound to another use answers `wrong`, as an unknown one does. The primary token is `api` only.
   */
  check(token: string | undefined, now = Date.now(), use: TokenUse = "api"): TokenCheck {
    if (!token) return { ok: false, reason: "missing" };
    const hash = sha256(token);
    if (timingSafeEqual(hash, this.primaryHash))
      return use === "api" ? { ok: true, scope: "manage", id: PRIMARY_TOKEN_ID } : { ok: false, reason: "wrong" };
    for (const t of this.issued) {
      const stored = Buffer.from(t.sha256, "hex");
      if (stored.length !== hash.length || !timingSafeEqual(hash, stored)) continue;
      if ((t.use ?? "api") !== use) return { ok: false, reason: "wrong" };
      const expiresAt = t.expiresAt ? Date.parse(t.expiresAt) : undefined;
      if (expiresAt !== undefined && expiresAt <= now) return { ok: false, reason: "expired" };
      return {
        ok: true,
        scope: t.scope,
        id: t.id,
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        ...(t.port !== undefined ? { port: t.port } : {}),
      };
    }
    return { ok: false, reason: "wrong" };
  }

  /** Why the token with this id no longer holds (expired, revoked), or undefined while it does. */
  invalidReason(id: string, now = Date.now()): string | undefined {
    if (id === PRIMARY_TOKEN_ID) return undefined;
    const t = this.issued.find((x) => x.id === id);
    if (!t) return `token ${id} has been revoked`;
    if (t.expiresAt && Date.parse(t.expiresAt) <= now) return `token ${id} expired at ${t.expiresAt}`;
    return undefined;
  }

  /** Issues a token; only its hash is stored, the token itself is returned once. */
  create(request: TokenRequest, now = Date.now()): { token: string; id: string; expiresAt: string } {
    const { scope, ttlMs, label, use = "api", port, issuer } = request;
    const token = `${TOKEN_PREFIX[use]}${randomBytes(32).toString("base64url")}`;
    const expiresAt = new Date(now + (ttlMs ?? DEFAULT_TOKEN_TTL_MS)).toISOString();
    const record: IssuedToken = {
      id: `t${randomBytes(6).toString("hex")}`,
      sha256: sha256(token).toString("hex"),
      scope,
      createdAt: new Date(now).toISOString(),
      expiresAt,
    };
    if (label !== undefined) record.label = label;
    if (use !== "api") record.use = use;
    if (port !== undefined) record.port = port;
    if (issuer !== undefined) record.issuer = issuer;
    const live = this.live(now);
    if (live.length >= this.maxLive)
      throw new ActionError(
        "limit_exceeded",
        `${live.length} issued tokens are live, the most the daemon keeps; revoke some (tokens.list, tokens.revoke) or wait for them to expire`,
      );
    this.save([...live, record]);
    return { token, id: record.id, expiresAt };
  }

  /** The issued tokens that still hold, without their hashes. */
  list(now = Date.now()): TokenInfo[] {
    return this.live(now).map(({ sha256: _hash, ...info }) => info);
  }

  /** Revokes an issued token at once: connections that use it are closed by the listeners. */
  revoke(id: string, now = Date.now()): TokenInfo {
    if (id === PRIMARY_TOKEN_ID)
      throw new ActionError(
        "invalid_request",
        `the ${PRIMARY_TOKEN_ID} token (the token file's) cannot be revoked; replace <config>/token and restart the daemon instead`,
        { path: "/tokenId" },
      );
    const live = this.live(now);
    const t = live.find((x) => x.id === id);
    if (!t)
      throw new ActionError("not_found", `no live token ${id}; tokens.list shows the tokens that can be revoked`, { path: "/tokenId" });
    this.save(live.filter((x) => x.id !== id));
    for (const listener of this.revokeListeners) listener(id);
    const { sha256: _hash, ...info } = t;
    return info;
  }

  /** Registers a callback for every revocation (the server closes that token's connections). */
  onRevoke(listener: (id: string) => void): void {
    this.revokeListeners.push(listener);
  }

  private live(now: number): IssuedToken[] {
    return this.issued.filter((t) => !t.expiresAt || Date.parse(t.expiresAt) > now);
  }

  // Expired and revoked tokens are dropped whenever the file is written, so it stays small.
  private save(tokens: IssuedToken[]): void {
    writeFileAtomicSync(this.issuedPath, JSON.stringify(tokens, null, 2), { mode: 0o600, fsync: true });
    this.issued = tokens;
  }
}

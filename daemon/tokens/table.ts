import { timingSafeEqual } from "node:crypto";
import { type IssuedToken, isPrimaryId, PRIMARY_TOKEN_ID, sha256, type TokenCheck, type TokenUse } from "./records.js";

/** Tokens dropped from the file whose end is remembered (in memory) so a refusal can say why. */
const REMEMBERED_ENDS = 1000;

/**
 * The issued tokens in memory and their verification: a presented token against the primary and
 * issued hashes, each token's chain of issuers, and how the ones dropped from it ended.
 */
export class TokenTable {
  private issued: IssuedToken[] = [];
  private byId = new Map<string, IssuedToken>();
  /** Hash → how a token dropped from the file ended, newest last, at most REMEMBERED_ENDS. */
  private readonly ended = new Map<string, "revoked" | "expired">();
  /**
   * Each record's hash as bytes and expiry as a number, parsed once: check, list and create walk
   * the whole table (up to MAX_LIVE_TOKENS, and each record's issuers), so a parse per visit
   * made a create near the full table cost ~1 ms of the event loop.
   */
  private readonly parsed = new WeakMap<IssuedToken, { hash: Buffer; expiresAt: number | undefined }>();

  /** The token file's token (its hash), or undefined while there is none (a token file not written yet). */
  private primaryHash: Buffer | undefined;
  /**
   * The id connections of the current token file's token carry: `primary`, then `primary.2`, `primary.3`
   * … after each replacement, so the old one's connections are told apart from the new one's.
   */
  primaryId = PRIMARY_TOKEN_ID;
  private primaryGeneration = 1;

  constructor(primaryHash: Buffer | undefined) {
    this.primaryHash = primaryHash;
  }

  /** Whether a token file's token is loaded (readiness). */
  get hasPrimary(): boolean {
    return this.primaryHash !== undefined;
  }

  /** Whether `hash` is the token file's token now. */
  isPrimary(hash: Buffer): boolean {
    return this.primaryHash !== undefined && timingSafeEqual(hash, this.primaryHash);
  }

  /**
   * Installs a new token file's token. The first one (none before) keeps the id `primary`; a
   * replacement gets the next generation's id, so `invalidReason` ends every connection of the old one.
   */
  setPrimary(hash: Buffer): void {
    if (this.primaryHash !== undefined) this.primaryId = `${PRIMARY_TOKEN_ID}.${++this.primaryGeneration}`;
    this.primaryHash = hash;
  }

  /** Every record, live or not, in file order (what tokens.json is written from). */
  get all(): readonly IssuedToken[] {
    return this.issued;
  }

  get(id: string): IssuedToken | undefined {
    return this.byId.get(id);
  }

  add(record: IssuedToken): void {
    this.issued.push(record);
    this.byId.set(record.id, record);
  }

  /** Replaces the table with these records. */
  load(tokens: IssuedToken[]): void {
    this.issued = tokens;
    this.byId = new Map(tokens.map((t) => [t.id, t]));
  }

  /**
   * Checks a presented token in constant time against the primary and issued hashes, for one use: a
   * token bound to another use answers `wrong`, as an unknown one does. The primary token is `api` only.
   */
  check(token: string | undefined, now: number, use: TokenUse): TokenCheck {
    if (!token) return { ok: false, reason: "missing" };
    const hash = sha256(token);
    if (this.isPrimary(hash)) return use === "api" ? { ok: true, scope: "manage", id: this.primaryId } : { ok: false, reason: "wrong" };
    for (const t of this.issued) {
      const stored = this.meta(t).hash;
      if (stored.length !== hash.length || !timingSafeEqual(hash, stored)) continue;
      if ((t.use ?? "api") !== use) return { ok: false, reason: "wrong" };
      const lineage = this.lineage(t);
      // An issuer that was revoked takes its descendants with it; one that expired, too.
      if (lineage === undefined) return { ok: false, reason: "wrong" };
      const expiresAt = lineage.expiresAt;
      if (expiresAt !== undefined && expiresAt <= now) return { ok: false, reason: "expired" };
      return {
        ok: true,
        scope: t.scope,
        id: t.id,
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        ...(t.port !== undefined ? { port: t.port } : {}),
        ...(t.pageOnly ? { pageOnly: true as const } : {}),
      };
    }
    return { ok: false, reason: "wrong" };
  }

  /** Why the token with this id no longer holds (expired, revoked), or undefined while it does. */
  invalidReason(id: string, now: number): string | undefined {
    if (isPrimaryId(id)) return id === this.primaryId ? undefined : "the token file's token has been replaced";
    const t = this.byId.get(id);
    if (!t) return `token ${id} has been revoked`;
    if (t.expiresAt && Date.parse(t.expiresAt) <= now) return `token ${id} expired at ${t.expiresAt}`;
    const lineage = this.lineage(t);
    if (lineage === undefined) return `token ${id}'s issuer has been revoked`;
    if (lineage.expiresAt !== undefined && lineage.expiresAt <= now) return `token ${id}'s issuer has expired`;
    return undefined;
  }

  /** How a token this table dropped ended (see TokenStore.endedReason). */
  endedReason(token: string): "revoked" | "expired" | undefined {
    return this.ended.get(sha256(token).toString("hex"));
  }

  /**
   * The earliest expiry along a token's chain of issuers, or undefined for the chain when one of
   * them is gone (revoked). Tokens issued before the cap existed can outlive their issuer in the
   * file; this is what still ends them with it.
   */
  lineage(t: IssuedToken): { expiresAt: number | undefined } | undefined {
    let expiresAt: number | undefined;
    let steps = 0;
    for (let at: IssuedToken | undefined = t; at; ) {
      if (++steps > this.issued.length + 1) return undefined; // a cycle can only be a damaged file
      const ends = this.meta(at).expiresAt;
      if (ends !== undefined) expiresAt = Math.min(expiresAt ?? Number.POSITIVE_INFINITY, ends);
      if (at.issuer === undefined || at.issuer === PRIMARY_TOKEN_ID) return { expiresAt };
      at = this.byId.get(at.issuer);
      if (!at) return undefined;
    }
    return { expiresAt };
  }

  /** The records that still hold at `now`; the ones that do not are remembered as ended. */
  live(now: number): IssuedToken[] {
    return this.issued.filter((t) => {
      const lineage = this.lineage(t);
      const holds = lineage !== undefined && (lineage.expiresAt === undefined || lineage.expiresAt > now);
      if (!holds) this.remember(t.sha256, lineage === undefined ? "revoked" : "expired");
      return holds;
    });
  }

  remember(hash: string, how: "revoked" | "expired"): void {
    this.ended.delete(hash);
    this.ended.set(hash, how);
    if (this.ended.size > REMEMBERED_ENDS) this.ended.delete(this.ended.keys().next().value!);
  }

  private meta(t: IssuedToken): { hash: Buffer; expiresAt: number | undefined } {
    let parsed = this.parsed.get(t);
    if (!parsed) {
      parsed = { hash: Buffer.from(t.sha256, "hex"), expiresAt: t.expiresAt ? Date.parse(t.expiresAt) : undefined };
      this.parsed.set(t, parsed);
    }
    return parsed;
  }
}

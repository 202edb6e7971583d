import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Static } from "@sinclair/typebox";
import type { TokenInfo as TokenInfoSchema } from "../../protocol/actions/tokens-manage.js";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import { writeFileAtomicSync, writeFileDurable } from "../util/atomic-write.js";

/** What `tokens.list` shows of an issued token: everything but its hash (the wire shape, from protocol/). */
export type TokenInfo = Static<typeof TokenInfoSchema>;

/**
 * An issued token as the token file keeps it: its public fields, the hash of its secret, and
 * whether it is a browser link's (it opens its page only and issues nothing).
 */
type IssuedToken = TokenInfo & { sha256: string; pageOnly?: true };

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
/** Lifetime of an issued token when `tokens.create` names none. */
export const DEFAULT_TOKEN_TTL_MS = 24 * 3600 * 1000;
/**
 * Live issued tokens at most: console.open needs only an observe token and issues one per call, and
 * every issue rewrites the file, so without a bound a client could grow it (and each write) forever.
 */
export const MAX_LIVE_TOKENS = 1000;
/**
 * Of those, what observe tokens may hold (links they opened, and what those issued): at most a
 * quarter in all and a fiftieth each, so observers can never use up the room manage needs, nor
 * one observer everybody else's share.
 */
const OBSERVE_SHARE = 1 / 4;
const OBSERVE_ISSUER_SHARE = 1 / 50;

const SCOPE_RANK: Record<Scope, number> = { observe: 0, manage: 1 };

/** A token's prefix says what it is for, so one pasted in the wrong place is recognisable. */
const TOKEN_PREFIX: Record<TokenUse, string> = { api: "hl_", ssh: "hlssh_", preview: "hlpv_", cdp: "hlcdp_" };

const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

/** Tokens dropped from the file whose end is remembered (in memory) so a refusal can say why. */
const REMEMBERED_ENDS = 1000;

/** After a failed write of tokens.json, how long until the table is written again (the file lacks a change). */
const SAVE_RETRY_MS = 5000;

/** Changes waiting for the next write of tokens.json, and the callers waiting for it to be durable. */
interface Batch {
  /** Tokens created in this batch: dropped again if its write fails, since nobody was given them. */
  created: IssuedToken[];
  waiters: Array<{ resolve: () => void; reject: (err: unknown) => void; change: "create" | "revoke" | "retry" }>;
}

/**
 * Tokens live in files only: `<config>/token` is the `manage` token (created 0600 on first start);
 * tokens issued later are kept as SHA-256 hashes in `<config>/tokens.json`, with scope and expiry.
 */
export class TokenStore {
  private readonly primaryHash: Buffer;
  private issued: IssuedToken[] = [];
  private byId = new Map<string, IssuedToken>();
  private readonly issuedPath: string;
  private readonly revokeListeners: Array<(id: string) => void> = [];
  /** Hash → how a token dropped from the file ended, newest last, at most REMEMBERED_ENDS. */
  private readonly ended = new Map<string, "revoked" | "expired">();
  /** Whether a write of tokens.json is in flight (at most one is). */
  private writing = false;
  /** The changes made since the write in flight began (or since the last one ended). */
  private pending: Batch | undefined;
  /** Writes of tokens.json started so far: a burst of changes shares one (tests read it). */
  writes = 0;
  /**
   * Each record's hash as bytes and expiry as a number, parsed once: check, list and create walk
   * the whole table (up to MAX_LIVE_TOKENS, and each record's issuers), so a parse per visit
   * made a create near the full table cost ~1 ms of the event loop.
   */
  private readonly parsed = new WeakMap<IssuedToken, { hash: Buffer; expiresAt: number | undefined }>();

  constructor(
    configDir: string,
    private readonly maxLive = MAX_LIVE_TOKENS,
    private readonly retryMs = SAVE_RETRY_MS,
  ) {
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    const tokenPath = join(configDir, "token");
    if (!existsSync(tokenPath)) writeFileAtomicSync(tokenPath, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, fsync: true });
    chmodSync(tokenPath, 0o600);
    this.primaryHash = sha256(readFileSync(tokenPath, "utf8").trim());
    this.issuedPath = join(configDir, "tokens.json");
    // A write cut short by a crash leaves its temporary sibling; tokens.json itself is old or new.
    for (const name of readdirSync(configDir)) if (name.startsWith("tokens.json.tmp-")) rmSync(join(configDir, name), { force: true });
    if (existsSync(this.issuedPath)) this.load(JSON.parse(readFileSync(this.issuedPath, "utf8")) as IssuedToken[]);
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
  invalidReason(id: string, now = Date.now()): string | undefined {
    if (id === PRIMARY_TOKEN_ID) return undefined;
    const t = this.byId.get(id);
    if (!t) return `token ${id} has been revoked`;
    if (t.expiresAt && Date.parse(t.expiresAt) <= now) return `token ${id} expired at ${t.expiresAt}`;
    const lineage = this.lineage(t);
    if (lineage === undefined) return `token ${id}'s issuer has been revoked`;
    if (lineage.expiresAt !== undefined && lineage.expiresAt <= now) return `token ${id}'s issuer has expired`;
    return undefined;
  }

  /**
   * How a token that no longer holds ended, when this daemon dropped it: a preview link refused as
   * `wrong` can then say "revoked" or "expired". Undefined for one it never issued (or forgot).
   */
  endedReason(token: string): "revoked" | "expired" | undefined {
    return this.ended.get(sha256(token).toString("hex"));
  }

  /**
   * The earliest expiry along a token's chain of issuers, or undefined for the chain when one of
   * them is gone (revoked). Tokens issued before the cap existed can outlive their issuer in the
   * file; this is what still ends them with it.
   */
  private lineage(t: IssuedToken): { expiresAt: number | undefined } | undefined {
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

  /** Throws what `create` would for this request (scope, issuer, budget) without issuing: for work that must not start otherwise. */
  checkIssue(request: Pick<TokenRequest, "scope" | "issuer">, now = Date.now()): void {
    const bound = this.issuerBound(request.issuer, request.scope, now);
    this.checkBudget(this.live(now), request.issuer, bound.scope);
  }

  /**
   * Issues a token; only its hash is stored, the token itself is returned once. The issuer bounds
   * it: its expiry is capped at the issuer's, a scope above the issuer's is `forbidden`, and so is
   * any token asked for by a token that may not issue (a browser link's). The token holds (and
   * counts against the budgets) from the call; the promise resolves once tokens.json keeps it.
   */
  async create(request: TokenRequest, now = Date.now()): Promise<{ token: string; id: string; expiresAt: string }> {
    const { scope, ttlMs, label, use = "api", port, issuer, pageOnly } = request;
    const live = this.live(now);
    const bound = this.issuerBound(issuer, scope, now, use);
    this.checkBudget(live, issuer, bound.scope);
    const token = `${TOKEN_PREFIX[use]}${randomBytes(32).toString("base64url")}`;
    const expiresAt = new Date(Math.min(now + (ttlMs ?? DEFAULT_TOKEN_TTL_MS), bound.expiresAt ?? Number.POSITIVE_INFINITY)).toISOString();
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
    if (pageOnly) record.pageOnly = true;
    if (live.length !== this.issued.length) this.load(live);
    this.issued.push(record);
    this.byId.set(record.id, record);
    await this.persist(record);
    return { token, id: record.id, expiresAt };
  }

  /** What an issuer allows: its scope and its (chain's) expiry; throws when it may not issue `scope`. */
  private issuerBound(issuer: string | undefined, scope: Scope, now: number, use: TokenUse = "api"): { scope: Scope; expiresAt?: number } {
    if (issuer === undefined || issuer === PRIMARY_TOKEN_ID) return { scope: "manage" };
    const why = this.invalidReason(issuer, now);
    if (why !== undefined) throw new ActionError("unauthorized", `${why}; reconnect with a valid token`);
    const record = this.byId.get(issuer)!;
    // A console link's preview buttons mint preview links: bound to one port, capped like any other.
    if (record.pageOnly && use !== "preview")
      throw new ActionError(
        "forbidden",
        `token ${issuer} is a browser link's: it opens its page only and cannot issue tokens or links (only preview links)`,
      );
    if (SCOPE_RANK[scope] > SCOPE_RANK[record.scope])
      throw new ActionError("forbidden", `token ${issuer} has scope ${record.scope} and cannot issue a ${scope} token`, { path: "/scope" });
    const expiresAt = this.lineage(record)?.expiresAt;
    return { scope: record.scope, ...(expiresAt !== undefined ? { expiresAt } : {}) };
  }

  /** Throws limit_exceeded when the table, the observers' share of it, or this observer's share is full. */
  private checkBudget(live: IssuedToken[], issuer: string | undefined, issuerScope: Scope): void {
    const full = (count: number, what: string): ActionError =>
      new ActionError(
        "limit_exceeded",
        `${count} ${what} are live, the most the daemon keeps; revoke some (tokens.list, tokens.revoke) or wait for them to expire`,
      );
    if (live.length >= this.maxLive) throw full(live.length, "issued tokens");
    if (issuerScope !== "observe") return;
    const observers = new Set(live.filter((t) => t.scope === "observe").map((t) => t.id));
    const byObservers = live.filter((t) => t.issuer !== undefined && observers.has(t.issuer));
    const mine = byObservers.filter((t) => t.issuer === issuer).length;
    const perIssuer = Math.max(1, Math.floor(this.maxLive * OBSERVE_ISSUER_SHARE));
    if (mine >= perIssuer) throw full(mine, `tokens issued by token ${issuer} (an observe token)`);
    const share = Math.max(1, Math.floor(this.maxLive * OBSERVE_SHARE));
    if (byObservers.length >= share) throw full(byObservers.length, "tokens issued by observe tokens");
  }

  /** The issued tokens that still hold, without their hashes. */
  list(now = Date.now()): TokenInfo[] {
    return this.live(now).map(publicInfo);
  }

  /**
   * Revokes an issued token and every token it issued (and they issued), at once: from the call
   * they are refused (a request on a connection that uses one is answered unauthorized and closes
   * it). Once tokens.json no longer has them (or its write failed) the listeners close every
   * connection that uses them, and the promise settles; the revoking request's reply goes first.
   */
  async revoke(id: string, now = Date.now()): Promise<TokenInfo> {
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
    const gone = new Set([id]);
    // Issued after their issuer, so one pass in file order finds every generation.
    for (const x of live) if (x.issuer !== undefined && gone.has(x.issuer)) gone.add(x.id);
    this.load(live.filter((x) => !gone.has(x.id)));
    for (const x of live) if (gone.has(x.id)) this.remember(x.sha256, "revoked");
    try {
      await this.persist();
    } finally {
      for (const revoked of gone) for (const listener of this.revokeListeners) listener(revoked);
    }
    return publicInfo(t);
  }

  /** Registers a callback for every revocation (the server closes that token's connections). */
  onRevoke(listener: (id: string) => void): void {
    this.revokeListeners.push(listener);
  }

  private live(now: number): IssuedToken[] {
    return this.issued.filter((t) => {
      const lineage = this.lineage(t);
      const holds = lineage !== undefined && (lineage.expiresAt === undefined || lineage.expiresAt > now);
      if (!holds) this.remember(t.sha256, lineage === undefined ? "revoked" : "expired");
      return holds;
    });
  }

  private remember(hash: string, how: "revoked" | "expired"): void {
    this.ended.delete(hash);
    this.ended.set(hash, how);
    if (this.ended.size > REMEMBERED_ENDS) this.ended.delete(this.ended.keys().next().value!);
  }

  /** Resolves once every change made so far is in tokens.json (for shutdown). */
  async flush(): Promise<void> {
    if (this.writing || this.pending) await this.persist().catch(() => undefined);
  }

  /**
   * Resolves once tokens.json holds the table as it is now. At most one write is in flight (off
   * the event loop: a 1000-token file costs a synchronous write and fsync of ~0.5 MB otherwise);
   * changes made meanwhile wait for the next one, which writes them all, so a burst of creates
   * costs two writes, not one each. Each write is a temporary file, fsynced, renamed over the old
   * one, so after a crash the file is the old table or the new, never a mix.
   */
  private persist(created?: IssuedToken, retry = false): Promise<void> {
    this.pending ??= { created: [], waiters: [] };
    if (created) this.pending.created.push(created);
    const change = created ? "create" : retry ? "retry" : "revoke";
    const done = new Promise<void>((resolve, reject) => this.pending!.waiters.push({ resolve, reject, change }));
    // Changes made in this turn join the write too: it starts in the next one.
    if (!this.writing) {
      this.writing = true;
      setImmediate(() => this.writeNext());
    }
    return done;
  }

  private writeNext(): void {
    const batch = this.pending;
    this.pending = undefined;
    if (!batch) {
      this.writing = false;
      return;
    }
    this.writes++;
    // Expired and revoked tokens are dropped whenever the file is written, so it stays small.
    writeFileDurable(this.issuedPath, JSON.stringify(this.issued)).then(
      () => {
        for (const w of batch.waiters) w.resolve();
        this.writeNext();
      },
      (err: NodeJS.ErrnoException) => {
        // Nobody was given these tokens: they must not hold. A revocation stays in force in
        // memory, and the file gets it with the next write: a later change's, or the retry's.
        const dropped = new Set(batch.created);
        if (dropped.size) this.load(this.issued.filter((t) => !dropped.has(t)));
        const why = `the token table could not be saved (${this.issuedPath}: ${err.code ?? err.message})`;
        const outcome = {
          create: "the token was not issued; retry once the disk has room",
          revoke: `the token is revoked (refused from now on), but the file still has it; the daemon saves it again every ${this.retryMs / 1000} s`,
          retry: "",
        };
        for (const w of batch.waiters) w.reject(new ActionError("unavailable", `${why}: ${outcome[w.change]}`));
        if (!this.pending) setTimeout(() => void this.persist(undefined, true).catch(() => undefined), this.retryMs).unref();
        this.writeNext();
      },
    );
  }

  private meta(t: IssuedToken): { hash: Buffer; expiresAt: number | undefined } {
    let parsed = this.parsed.get(t);
    if (!parsed) {
      parsed = { hash: Buffer.from(t.sha256, "hex"), expiresAt: t.expiresAt ? Date.parse(t.expiresAt) : undefined };
      this.parsed.set(t, parsed);
    }
    return parsed;
  }

  private load(tokens: IssuedToken[]): void {
    this.issued = tokens;
    this.byId = new Map(tokens.map((t) => [t.id, t]));
  }
}

function publicInfo({ sha256: _hash, pageOnly: _pageOnly, ...info }: IssuedToken): TokenInfo {
  return info;
}

import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import { writeFileAtomicSync } from "../util/atomic-write.js";
import { checkBudget } from "./budget.js";
import { TokenFileWriter } from "./file-writer.js";
import {
  DEFAULT_TOKEN_TTL_MS,
  type IssuedToken,
  isPrimaryId,
  MAX_LIVE_TOKENS,
  PRIMARY_TOKEN_ID,
  publicInfo,
  SCOPE_RANK,
  sha256,
  TOKEN_PREFIX,
  type TokenCheck,
  type TokenInfo,
  type TokenRequest,
  type TokenUse,
} from "./records.js";
import { TokenTable } from "./table.js";

export {
  DEFAULT_TOKEN_TTL_MS,
  MAX_LIVE_TOKENS,
  PRIMARY_TOKEN_ID,
  type TokenBinding,
  type TokenCheck,
  type TokenInfo,
  type TokenRequest,
  type TokenUse,
} from "./records.js";

/** After a failed write of tokens.json, how long until the table is written again (the file lacks a change). */
const SAVE_RETRY_MS = 5000;

/** What a token file may hold: printable ASCII without spaces (tokenFromFile). */
const TOKEN_TEXT = /^[\x21-\x7e]+$/;

/** The token a token file holds (its text, trimmed), or why it holds none. */
export function tokenFromFile(text: string, minLength = 1): { ok: true; token: string } | { ok: false; why: string } {
  const token = text.trim();
  if (token.length === 0) return { ok: false, why: "the token file is empty" };
  if (token.length > 4096) return { ok: false, why: "the token file holds more than 4096 characters" };
  if (!TOKEN_TEXT.test(token)) return { ok: false, why: "the token holds a space or a character outside printable ASCII" };
  if (token.length < minLength) return { ok: false, why: `the token is shorter than ${minLength} characters` };
  return { ok: true, token };
}

/**
 * Tokens live in files only: `<config>/token` is the `manage` token (created 0600 on first start);
 * tokens issued later are kept as SHA-256 hashes in `<config>/tokens.json`, with scope and expiry.
 * The table (table.ts) verifies, the writer (file-writer.ts) keeps the file; this is what issues
 * and revokes.
 */
export class TokenStore {
  private readonly table: TokenTable;
  private readonly file: TokenFileWriter;
  private readonly revokeListeners: Array<(id: string) => void> = [];

  /** Where the hash of the token file's token in force is kept, to notice a token replaced while the daemon was down. */
  private readonly primaryRecord: string;
  /** The token file: `<config>/token` unless `tokenFile` names another (a mounted Secret's). */
  readonly tokenPath: string;

  /**
   * `tokenFile`: a token file the daemon only reads (a Kubernetes Secret's, say): never created, its
   * mode left alone, and while it is missing or empty no token-file token is accepted. Without it,
   * `<config>/token` is made on first start.
   */
  constructor(
    configDir: string,
    private readonly maxLive = MAX_LIVE_TOKENS,
    retryMs = SAVE_RETRY_MS,
    tokenFile?: string,
  ) {
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    this.tokenPath = tokenFile ?? join(configDir, "token");
    if (tokenFile === undefined) {
      if (!existsSync(this.tokenPath))
        writeFileAtomicSync(this.tokenPath, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, fsync: true });
      chmodSync(this.tokenPath, 0o600);
    }
    const primary = readTokenFile(this.tokenPath);
    this.table = new TokenTable(primary === undefined ? undefined : sha256(primary));
    this.primaryRecord = join(configDir, "token.sha256");
    const issuedPath = join(configDir, "tokens.json");
    // Expired and revoked tokens are dropped whenever the file is written, so it stays small.
    this.file = new TokenFileWriter(
      issuedPath,
      () => JSON.stringify(this.table.all),
      (dropped) => this.table.load(this.table.all.filter((t) => !dropped.has(t))),
      retryMs,
    );
    // A write cut short by a crash leaves its temporary sibling; tokens.json itself is old or new.
    for (const name of readdirSync(configDir)) if (name.startsWith("tokens.json.tmp-")) rmSync(join(configDir, name), { force: true });
    if (existsSync(issuedPath)) this.table.load(JSON.parse(readFileSync(issuedPath, "utf8")) as IssuedToken[]);
    // A recorded hash that differs: the token file was replaced while the daemon was down, so what
    // the old token issued goes too (tokens.json is written again at once, off the event loop).
    if (primary !== undefined) {
      const recorded = this.recordedPrimary();
      if (recorded !== sha256(primary).toString("hex")) {
        if (recorded !== undefined && this.dropIssued().length > 0) this.file.persist().catch(() => {});
        this.recordPrimary(sha256(primary));
      }
    }
  }

  /** Whether a token file's token is in force (readiness: a daemon nobody can reach is not ready). */
  get hasPrimary(): boolean {
    return this.table.hasPrimary;
  }

  /**
   * Puts a new token file's token in force, without a restart: the old one is refused from this call,
   * and so is every token issued so far (all of them descend from it), which are dropped from
   * tokens.json; the listeners then close every connection that used them. The same token again is
   * nothing. Resolves with whether it replaced one.
   */
  async replacePrimary(token: string): Promise<boolean> {
    const hash = sha256(token);
    if (this.table.isPrimary(hash)) return false;
    const before = this.table.hasPrimary ? this.table.primaryId : undefined;
    // A token file that was missing and now holds the token last in force (recorded) takes nothing away.
    const same = before === undefined && this.recordedPrimary() === hash.toString("hex");
    this.table.setPrimary(hash);
    const gone = same ? [] : this.dropIssued();
    this.recordPrimary(hash);
    try {
      if (gone.length > 0) await this.file.persist();
    } finally {
      for (const id of before === undefined ? gone : [before, ...gone]) for (const listener of this.revokeListeners) listener(id);
    }
    return true;
  }

  /** Drops every issued token (remembered as revoked); their ids. */
  private dropIssued(): string[] {
    const all = this.table.all;
    this.table.load([]);
    for (const t of all) this.table.remember(t.sha256, "revoked");
    return all.map((t) => t.id);
  }

  /** The hash of the token file's token last in force, as recorded (hex), if any. */
  private recordedPrimary(): string | undefined {
    try {
      return readFileSync(this.primaryRecord, "utf8").trim();
    } catch {
      return undefined;
    }
  }

  private recordPrimary(hash: Buffer): void {
    try {
      writeFileAtomicSync(this.primaryRecord, `${hash.toString("hex")}\n`, { mode: 0o600 });
    } catch {
      // A read-only config directory: a replacement while the daemon is down then keeps the issued tokens.
    }
  }

  /** Writes of tokens.json started so far: a burst of changes shares one (tests read it). */
  get writes(): number {
    return this.file.writes;
  }

  /**
   * Checks a presented token in constant time against the primary and issued hashes, for one use: a
   * token bound to another use answers `wrong`, as an unknown one does. The primary token is `api` only.
   */
  check(token: string | undefined, now = Date.now(), use: TokenUse = "api"): TokenCheck {
    return this.table.check(token, now, use);
  }

  /** Why the token with this id no longer holds (expired, revoked), or undefined while it does. */
  invalidReason(id: string, now = Date.now()): string | undefined {
    return this.table.invalidReason(id, now);
  }

  /**
   * How a token that no longer holds ended, when this daemon dropped it: a preview link refused as
   * `wrong` can then say "revoked" or "expired". Undefined for one it never issued (or forgot).
   */
  endedReason(token: string): "revoked" | "expired" | undefined {
    return this.table.endedReason(token);
  }

  /** Throws what `create` would for this request (scope, issuer, budget) without issuing: for work that must not start otherwise. */
  checkIssue(request: Pick<TokenRequest, "scope" | "issuer">, now = Date.now()): void {
    const bound = this.issuerBound(request.issuer, request.scope, now);
    checkBudget(this.table.live(now), this.maxLive, request.issuer, bound.scope);
  }

  /**
   * Issues a token; only its hash is stored, the token itself is returned once. The issuer bounds
   * it: its expiry is capped at the issuer's, a scope above the issuer's is `forbidden`, and so is
   * any token asked for by a token that may not issue (a browser link's). The token holds (and
   * counts against the budgets) from the call; the promise resolves once tokens.json keeps it.
   */
  async create(request: TokenRequest, now = Date.now()): Promise<{ token: string; id: string; expiresAt: string }> {
    const { scope, ttlMs, label, use = "api", port, issuer, pageOnly } = request;
    const live = this.table.live(now);
    const bound = this.issuerBound(issuer, scope, now, use);
    checkBudget(live, this.maxLive, issuer, bound.scope);
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
    // Every generation of the token file's token issues as `primary` (a replacement drops what the old one issued).
    if (issuer !== undefined) record.issuer = isPrimaryId(issuer) ? PRIMARY_TOKEN_ID : issuer;
    if (pageOnly) record.pageOnly = true;
    if (live.length !== this.table.all.length) this.table.load(live);
    this.table.add(record);
    await this.file.persist(record);
    return { token, id: record.id, expiresAt };
  }

  /** What an issuer allows: its scope and its (chain's) expiry; throws when it may not issue `scope`. */
  private issuerBound(issuer: string | undefined, scope: Scope, now: number, use: TokenUse = "api"): { scope: Scope; expiresAt?: number } {
    if (issuer === undefined || issuer === this.table.primaryId) return { scope: "manage" };
    if (isPrimaryId(issuer)) throw new ActionError("unauthorized", "the token file's token has been replaced; reconnect with the new one");
    const why = this.table.invalidReason(issuer, now);
    if (why !== undefined) throw new ActionError("unauthorized", `${why}; reconnect with a valid token`);
    const record = this.table.get(issuer)!;
    // A console link's preview buttons mint preview links: bound to one port, capped like any other.
    if (record.pageOnly && use !== "preview")
      throw new ActionError(
        "forbidden",
        `token ${issuer} is a browser link's: it opens its page only and cannot issue tokens or links (only preview links)`,
      );
    if (SCOPE_RANK[scope] > SCOPE_RANK[record.scope])
      throw new ActionError("forbidden", `token ${issuer} has scope ${record.scope} and cannot issue a ${scope} token`, { path: "/scope" });
    const expiresAt = this.table.lineage(record)?.expiresAt;
    return { scope: record.scope, ...(expiresAt !== undefined ? { expiresAt } : {}) };
  }

  /** The issued tokens that still hold, without their hashes. */
  list(now = Date.now()): TokenInfo[] {
    return this.table.live(now).map(publicInfo);
  }

  /**
   * Revokes an issued token and every token it issued (and they issued), at once: from the call
   * they are refused (a request on a connection that uses one is answered unauthorized and closes
   * it). Once tokens.json no longer has them (or its write failed) the listeners close every
   * connection that uses them, and the promise settles; the revoking request's reply goes first.
   */
  async revoke(id: string, now = Date.now()): Promise<TokenInfo> {
    if (isPrimaryId(id))
      throw new ActionError(
        "invalid_request",
        `the ${PRIMARY_TOKEN_ID} token (the token file's) cannot be revoked; replace the token file instead (the daemon takes the new token at once and drops every token the old one issued)`,
        { path: "/tokenId" },
      );
    const live = this.table.live(now);
    const t = live.find((x) => x.id === id);
    if (!t)
      throw new ActionError("not_found", `no live token ${id}; tokens.list shows the tokens that can be revoked`, { path: "/tokenId" });
    const gone = new Set([id]);
    // Issued after their issuer, so one pass in file order finds every generation.
    for (const x of live) if (x.issuer !== undefined && gone.has(x.issuer)) gone.add(x.id);
    this.table.load(live.filter((x) => !gone.has(x.id)));
    for (const x of live) if (gone.has(x.id)) this.table.remember(x.sha256, "revoked");
    try {
      await this.file.persist();
    } finally {
      for (const revoked of gone) for (const listener of this.revokeListeners) listener(revoked);
    }
    return publicInfo(t);
  }

  /** Registers a callback for every revocation (the server closes that token's connections). */
  onRevoke(listener: (id: string) => void): void {
    this.revokeListeners.push(listener);
  }

  /** Resolves once every change made so far is in tokens.json (for shutdown). */
  flush(): Promise<void> {
    return this.file.flush();
  }
}

/** The token a token file holds at start (any non-empty text, trimmed), or undefined when it is missing or holds none. */
function readTokenFile(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const read = tokenFromFile(text);
  return read.ok ? read.token : undefined;
}

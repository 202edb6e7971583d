import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../protocol/define.js";
import { writeFileAtomicSync } from "../util/atomic-write.js";

interface IssuedToken {
  id: string;
  sha256: string;
  scope: Scope;
  createdAt: string;
  expiresAt?: string;
  label?: string;
}

export type TokenCheck = { ok: true; scope: Scope; id: string } | { ok: false; reason: "missing" | "wrong" | "expired" };

const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

/**
 * Tokens live in files only: `<config>/token` is the `manage` token (created 0600 on first start);
 * tokens issued later are kept as SHA-256 hashes in `<config>/tokens.json`, with scope and expiry.
 */
export class TokenStore {
  private readonly primaryHash: Buffer;
  private issued: IssuedToken[] = [];
  private readonly issuedPath: string;

  constructor(private readonly configDir: string) {
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    const tokenPath = join(configDir, "token");
    if (!existsSync(tokenPath)) writeFileAtomicSync(tokenPath, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, fsync: true });
    chmodSync(tokenPath, 0o600);
    this.primaryHash = sha256(readFileSync(tokenPath, "utf8").trim());
    this.issuedPath = join(configDir, "tokens.json");
    if (existsSync(this.issuedPath)) this.issued = JSON.parse(readFileSync(this.issuedPath, "utf8")) as IssuedToken[];
  }

  /** Checks a presented token in constant time against the primary and issued hashes. */
  check(token: string | undefined, now = Date.now()): TokenCheck {
    if (!token) return { ok: false, reason: "missing" };
    const hash = sha256(token);
    if (timingSafeEqual(hash, this.primaryHash)) return { ok: true, scope: "manage", id: "primary" };
    for (const t of this.issued) {
      if (!timingSafeEqual(hash, Buffer.from(t.sha256, "hex"))) continue;
      if (t.expiresAt && Date.parse(t.expiresAt) <= now) return { ok: false, reason: "expired" };
      return { ok: true, scope: t.scope, id: t.id };
    }
    return { ok: false, reason: "wrong" };
  }

  /** Issues a token; only its hash is stored, the token itself is returned once. */
  create(scope: Scope, ttlMs: number | undefined, label: string | undefined, now = Date.now()): { token: string; id: string; expiresAt?: string } {
    const token = `hl_${randomBytes(32).toString("base64url")}`;
    const record: IssuedToken = { id: `t${randomBytes(6).toString("hex")}`, sha256: sha256(token).toString("hex"), scope, createdAt: new Date(now).toISOString() };
    if (ttlMs !== undefined) record.expiresAt = new Date(now + ttlMs).toISOString();
    if (label !== undefined) record.label = label;
    // Expired tokens are dropped whenever a new one is written, so the file stays small.
    this.issued = [...this.issued.filter((t) => !t.expiresAt || Date.parse(t.expiresAt) > now), record];
    writeFileAtomicSync(this.issuedPath, JSON.stringify(this.issued, null, 2), { mode: 0o600, fsync: true });
    return { token, id: record.id, ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}) };
  }
}

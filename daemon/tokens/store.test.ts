import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TokenStore } from "./store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function store(): { tokens: TokenStore; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "hotline-tokens-"));
  dirs.push(dir);
  return { tokens: new TokenStore(dir), dir };
}

/** The clock is the `now` every method takes: expiry is tested at exact instants, without waiting. */
const T0 = Date.parse("2026-11-30T12:00:00.000Z");
const TTL = 60_000;

describe("token expiry", () => {
  it("a token holds until the instant of its expiry, then is refused as expired", () => {
    const { tokens } = store();
    const { token, id, expiresAt } = tokens.create({ scope: "observe", ttlMs: TTL, label: "ci" }, T0);
    expect(expiresAt).toBe(new Date(T0 + TTL).toISOString());
    expect(tokens.check(token, T0 + TTL - 1)).toEqual({ ok: true, scope: "observe", id, expiresAt: T0 + TTL });
    expect(tokens.invalidReason(id, T0 + TTL - 1)).toBeUndefined();
    expect(tokens.check(token, T0 + TTL)).toEqual({ ok: false, reason: "expired" });
    expect(tokens.invalidReason(id, T0 + TTL)).toBe(`token ${id} expired at ${expiresAt}`);
  });

  it("an expired token leaves tokens.list, cannot be revoked, and is dropped from the file at the next write", () => {
    const { tokens, dir } = store();
    const old = tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const fresh = tokens.create({ scope: "manage", ttlMs: 10 * TTL }, T0);
    expect(tokens.list(T0 + TTL - 1).map((t) => t.id)).toEqual([old.id, fresh.id]);
    expect(tokens.list(T0 + TTL).map((t) => t.id)).toEqual([fresh.id]);
    expect(() => tokens.revoke(old.id, T0 + TTL)).toThrow(expect.objectContaining({ code: "not_found" }));
    tokens.create({ scope: "observe", ttlMs: TTL }, T0 + TTL); // a write: the expired one is dropped
    const reloaded = new TokenStore(dir);
    expect(reloaded.check(old.token, T0)).toEqual({ ok: false, reason: "wrong" });
    expect(reloaded.check(fresh.token, T0 + TTL)).toMatchObject({ ok: true, id: fresh.id });
  });

  it("the token file's primary token never expires", () => {
    const { tokens } = store();
    expect(tokens.invalidReason("primary", Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });
});

describe("the number of live tokens", () => {
  it("is bounded: past the cap create answers limit_exceeded, and an expired token makes room again", () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-tokens-"));
    dirs.push(dir);
    const tokens = new TokenStore(dir, 3);
    for (let i = 0; i < 3; i++) tokens.create({ scope: "observe", ttlMs: TTL + i }, T0);
    expect(() => tokens.create({ scope: "observe", ttlMs: TTL }, T0)).toThrow(expect.objectContaining({ code: "limit_exceeded" }));
    expect(tokens.list(T0)).toHaveLength(3);
    tokens.create({ scope: "observe", ttlMs: TTL }, T0 + TTL); // the first one expired at T0 + TTL
    expect(tokens.list(T0 + TTL)).toHaveLength(3);
  });
});

describe("a token's use", () => {
  it("an ssh or preview token is refused by the API and an API token by them, as an unknown one is", () => {
    const { tokens } = store();
    const ssh = tokens.create({ scope: "manage", ttlMs: TTL, label: "ssh", use: "ssh", issuer: "primary" }, T0);
    const preview = tokens.create({ scope: "manage", ttlMs: TTL, use: "preview", port: 5173 }, T0);
    const api = tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    expect(ssh.token.startsWith("hlssh_")).toBe(true);
    expect(preview.token.startsWith("hlpv_")).toBe(true);
    expect(tokens.check(ssh.token, T0)).toEqual({ ok: false, reason: "wrong" });
    expect(tokens.check(ssh.token, T0, "ssh")).toMatchObject({ ok: true, id: ssh.id, scope: "manage" });
    expect(tokens.check(preview.token, T0, "ssh")).toEqual({ ok: false, reason: "wrong" });
    expect(tokens.check(preview.token, T0, "preview")).toMatchObject({ ok: true, id: preview.id, port: 5173 });
    expect(tokens.check(api.token, T0, "preview")).toEqual({ ok: false, reason: "wrong" });
    expect(tokens.list(T0).find((t) => t.id === ssh.id)).toMatchObject({ use: "ssh", issuer: "primary", label: "ssh" });
  });
});

describe("what a token issues is bounded by it", () => {
  it("never outlives its issuer, nor its issuer's issuer", () => {
    const { tokens } = store();
    const parent = tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    const child = tokens.create({ scope: "manage", ttlMs: 366 * 24 * 3600 * 1000, issuer: parent.id }, T0 + 1000);
    expect(child.expiresAt).toBe(parent.expiresAt);
    const grandchild = tokens.create({ scope: "observe", ttlMs: 10 * TTL, issuer: child.id }, T0 + 2000);
    expect(grandchild.expiresAt).toBe(parent.expiresAt);
    expect(tokens.check(grandchild.token, T0 + TTL)).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses a scope above the issuer's, and any token asked for by a link's token, with forbidden", () => {
    const { tokens } = store();
    const observer = tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0);
    expect(() => tokens.create({ scope: "manage", ttlMs: TTL, issuer: observer.id }, T0)).toThrow(
      expect.objectContaining({ code: "forbidden", path: "/scope" }),
    );
    const link = tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary", pageOnly: true }, T0);
    expect(() => tokens.create({ scope: "observe", ttlMs: TTL, issuer: link.id }, T0)).toThrow(
      expect.objectContaining({ code: "forbidden", message: expect.stringContaining("browser link") }),
    );
    expect(() => tokens.create({ scope: "manage", ttlMs: TTL, issuer: link.id, use: "ssh" }, T0)).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    // The console's preview buttons: a link may issue a preview link, bound to a port and capped by it.
    const preview = tokens.create({ scope: "manage", ttlMs: 10 * TTL, issuer: link.id, use: "preview", port: 5173 }, T0);
    expect(preview.expiresAt).toBe(new Date(T0 + TTL).toISOString());
    expect(tokens.list(T0).find((t) => t.id === link.id)).not.toHaveProperty("pageOnly");
  });

  it("an expired or revoked issuer cannot issue", () => {
    const { tokens } = store();
    const parent = tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    expect(() => tokens.create({ scope: "observe", issuer: parent.id }, T0 + TTL)).toThrow(
      expect.objectContaining({ code: "unauthorized" }),
    );
    tokens.revoke(parent.id, T0);
    expect(() => tokens.create({ scope: "observe", issuer: parent.id }, T0)).toThrow(expect.objectContaining({ code: "unauthorized" }));
  });

  it("revoking a token revokes every token it issued, through the generations, and tells the listeners of each", () => {
    const { tokens, dir } = store();
    const parent = tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    const child = tokens.create({ scope: "manage", ttlMs: TTL, issuer: parent.id }, T0);
    const grandchild = tokens.create({ scope: "observe", ttlMs: TTL, issuer: child.id }, T0);
    const bystander = tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0);
    const revoked: string[] = [];
    tokens.onRevoke((id) => revoked.push(id));
    tokens.revoke(parent.id, T0);
    expect(revoked.sort()).toEqual([parent.id, child.id, grandchild.id].sort());
    for (const t of [parent, child, grandchild]) expect(tokens.check(t.token, T0)).toEqual({ ok: false, reason: "wrong" });
    expect(tokens.check(bystander.token, T0)).toMatchObject({ ok: true });
    expect(new TokenStore(dir).list(T0).map((t) => t.id)).toEqual([bystander.id]);
  });

  it("a token in the file that outlives its issuer (written before the cap) ends with it", () => {
    const { tokens, dir } = store();
    const parent = tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    const child = tokens.create({ scope: "manage", ttlMs: TTL, issuer: parent.id }, T0);
    const file = join(dir, "tokens.json");
    const records = JSON.parse(readFileSync(file, "utf8")) as Array<{ id: string; expiresAt: string }>;
    records.find((r) => r.id === child.id)!.expiresAt = new Date(T0 + 100 * TTL).toISOString();
    writeFileSync(file, JSON.stringify(records));
    const reloaded = new TokenStore(dir);
    expect(reloaded.check(child.token, T0 + TTL - 1)).toMatchObject({ ok: true, expiresAt: T0 + TTL });
    expect(reloaded.check(child.token, T0 + TTL)).toEqual({ ok: false, reason: "expired" });
    expect(reloaded.invalidReason(child.id, T0 + TTL)).toBe(`token ${child.id}'s issuer has expired`);
  });
});

describe("budgets: a lesser token cannot use up what a greater one needs", () => {
  it("one observe token issues at most a fiftieth of the table, all observe tokens a quarter; manage keeps the rest", () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-tokens-"));
    dirs.push(dir);
    const tokens = new TokenStore(dir, 200); // 4 per observer, 50 for all observers
    const observers = Array.from({ length: 14 }, () => tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0));
    const issue = (issuer: string) => tokens.create({ scope: "observe", ttlMs: TTL, issuer, pageOnly: true }, T0);
    for (let i = 0; i < 4; i++) issue(observers[0]!.id);
    expect(() => issue(observers[0]!.id)).toThrow(
      expect.objectContaining({ code: "limit_exceeded", message: expect.stringContaining(observers[0]!.id) }),
    );
    let issued = 4;
    for (const o of observers.slice(1)) {
      for (let i = 0; i < 4 && issued < 50; i++, issued++) issue(o.id);
    }
    expect(() => issue(observers[13]!.id)).toThrow(
      expect.objectContaining({ code: "limit_exceeded", message: expect.stringContaining("issued by observe tokens") }),
    );
    // 14 observers + 50 of their links: manage still has 136 places.
    for (let i = 0; i < 136; i++) tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0);
    expect(() => tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0)).toThrow(
      expect.objectContaining({ code: "limit_exceeded" }),
    );
  });
});

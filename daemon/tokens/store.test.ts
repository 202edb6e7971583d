import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
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
  it("a token holds until the instant of its expiry, then is refused as expired", async () => {
    const { tokens } = store();
    const { token, id, expiresAt } = await tokens.create({ scope: "observe", ttlMs: TTL, label: "ci" }, T0);
    expect(expiresAt).toBe(new Date(T0 + TTL).toISOString());
    expect(tokens.check(token, T0 + TTL - 1)).toEqual({ ok: true, scope: "observe", id, expiresAt: T0 + TTL });
    expect(tokens.invalidReason(id, T0 + TTL - 1)).toBeUndefined();
    expect(tokens.check(token, T0 + TTL)).toEqual({ ok: false, reason: "expired" });
    expect(tokens.invalidReason(id, T0 + TTL)).toBe(`token ${id} expired at ${expiresAt}`);
  });

  it("an expired token leaves tokens.list, cannot be revoked, and is dropped from the file at the next write", async () => {
    const { tokens, dir } = store();
    const old = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const fresh = await tokens.create({ scope: "manage", ttlMs: 10 * TTL }, T0);
    expect(tokens.list(T0 + TTL - 1).map((t) => t.id)).toEqual([old.id, fresh.id]);
    expect(tokens.list(T0 + TTL).map((t) => t.id)).toEqual([fresh.id]);
    await expect(tokens.revoke(old.id, T0 + TTL)).rejects.toThrow(expect.objectContaining({ code: "not_found" }));
    await tokens.create({ scope: "observe", ttlMs: TTL }, T0 + TTL); // a write: the expired one is dropped
    const reloaded = new TokenStore(dir);
    expect(reloaded.check(old.token, T0)).toEqual({ ok: false, reason: "wrong" });
    expect(reloaded.check(fresh.token, T0 + TTL)).toMatchObject({ ok: true, id: fresh.id });
  });

  it("the token file's primary token never expires", async () => {
    const { tokens } = store();
    expect(tokens.invalidReason("primary", Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });
});

describe("the number of live tokens", () => {
  it("is bounded: past the cap create answers limit_exceeded, and an expired token makes room again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-tokens-"));
    dirs.push(dir);
    const tokens = new TokenStore(dir, 3);
    for (let i = 0; i < 3; i++) await tokens.create({ scope: "observe", ttlMs: TTL + i }, T0);
    await expect(tokens.create({ scope: "observe", ttlMs: TTL }, T0)).rejects.toThrow(expect.objectContaining({ code: "limit_exceeded" }));
    expect(tokens.list(T0)).toHaveLength(3);
    await tokens.create({ scope: "observe", ttlMs: TTL }, T0 + TTL); // the first one expired at T0 + TTL
    expect(tokens.list(T0 + TTL)).toHaveLength(3);
  });
});

describe("a token's use", () => {
  it("an ssh or preview token is refused by the API and an API token by them, as an unknown one is", async () => {
    const { tokens } = store();
    const ssh = await tokens.create({ scope: "manage", ttlMs: TTL, label: "ssh", use: "ssh", issuer: "primary" }, T0);
    const preview = await tokens.create({ scope: "manage", ttlMs: TTL, use: "preview", port: 5173 }, T0);
    const api = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
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
  it("never outlives its issuer, nor its issuer's issuer", async () => {
    const { tokens } = store();
    const parent = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    const child = await tokens.create({ scope: "manage", ttlMs: 366 * 24 * 3600 * 1000, issuer: parent.id }, T0 + 1000);
    expect(child.expiresAt).toBe(parent.expiresAt);
    const grandchild = await tokens.create({ scope: "observe", ttlMs: 10 * TTL, issuer: child.id }, T0 + 2000);
    expect(grandchild.expiresAt).toBe(parent.expiresAt);
    expect(tokens.check(grandchild.token, T0 + TTL)).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses a scope above the issuer's, and any token asked for by a link's token, with forbidden", async () => {
    const { tokens } = store();
    const observer = await tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0);
    await expect(tokens.create({ scope: "manage", ttlMs: TTL, issuer: observer.id }, T0)).rejects.toThrow(
      expect.objectContaining({ code: "forbidden", path: "/scope" }),
    );
    const link = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary", pageOnly: true }, T0);
    await expect(tokens.create({ scope: "observe", ttlMs: TTL, issuer: link.id }, T0)).rejects.toThrow(
      expect.objectContaining({ code: "forbidden", message: expect.stringContaining("browser link") }),
    );
    await expect(tokens.create({ scope: "manage", ttlMs: TTL, issuer: link.id, use: "ssh" }, T0)).rejects.toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    // The console's preview buttons: a link may issue a preview link, bound to a port and capped by it.
    const preview = await tokens.create({ scope: "manage", ttlMs: 10 * TTL, issuer: link.id, use: "preview", port: 5173 }, T0);
    expect(preview.expiresAt).toBe(new Date(T0 + TTL).toISOString());
    expect(tokens.list(T0).find((t) => t.id === link.id)).not.toHaveProperty("pageOnly");
  });

  it("an expired or revoked issuer cannot issue", async () => {
    const { tokens } = store();
    const parent = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    await expect(tokens.create({ scope: "observe", issuer: parent.id }, T0 + TTL)).rejects.toThrow(
      expect.objectContaining({ code: "unauthorized" }),
    );
    await tokens.revoke(parent.id, T0);
    await expect(tokens.create({ scope: "observe", issuer: parent.id }, T0)).rejects.toThrow(
      expect.objectContaining({ code: "unauthorized" }),
    );
  });

  it("revoking a token revokes every token it issued, through the generations, and tells the listeners of each", async () => {
    const { tokens, dir } = store();
    const parent = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    const child = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: parent.id }, T0);
    const grandchild = await tokens.create({ scope: "observe", ttlMs: TTL, issuer: child.id }, T0);
    const bystander = await tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0);
    const revoked: string[] = [];
    tokens.onRevoke((id) => revoked.push(id));
    await tokens.revoke(parent.id, T0);
    expect(revoked.sort()).toEqual([parent.id, child.id, grandchild.id].sort());
    for (const t of [parent, child, grandchild]) expect(tokens.check(t.token, T0)).toEqual({ ok: false, reason: "wrong" });
    expect(tokens.check(bystander.token, T0)).toMatchObject({ ok: true });
    expect(new TokenStore(dir).list(T0).map((t) => t.id)).toEqual([bystander.id]);
  });

  it("a token in the file that outlives its issuer (written before the cap) ends with it", async () => {
    const { tokens, dir } = store();
    const parent = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: "primary" }, T0);
    const child = await tokens.create({ scope: "manage", ttlMs: TTL, issuer: parent.id }, T0);
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
  it("one observe token issues at most a fiftieth of the table, all observe tokens a quarter; manage keeps the rest", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-tokens-"));
    dirs.push(dir);
    const tokens = new TokenStore(dir, 200); // 4 per observer, 50 for all observers
    const observers = await Promise.all(
      Array.from({ length: 14 }, () => tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0)),
    );
    const issue = (issuer: string) => tokens.create({ scope: "observe", ttlMs: TTL, issuer, pageOnly: true }, T0);
    for (let i = 0; i < 4; i++) await issue(observers[0]!.id);
    await expect(issue(observers[0]!.id)).rejects.toThrow(
      expect.objectContaining({ code: "limit_exceeded", message: expect.stringContaining(observers[0]!.id) }),
    );
    let issued = 4;
    for (const o of observers.slice(1)) {
      for (let i = 0; i < 4 && issued < 50; i++, issued++) await issue(o.id);
    }
    await expect(issue(observers[13]!.id)).rejects.toThrow(
      expect.objectContaining({ code: "limit_exceeded", message: expect.stringContaining("issued by observe tokens") }),
    );
    // 14 observers + 50 of their links: manage still has 136 places.
    for (let i = 0; i < 136; i++) await tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0);
    await expect(tokens.create({ scope: "observe", ttlMs: TTL, issuer: "primary" }, T0)).rejects.toThrow(
      expect.objectContaining({ code: "limit_exceeded" }),
    );
  });
});

describe("tokens.json is written off the event loop, one write at a time, and a change answers once it is kept", () => {
  const onDisk = (dir: string): string[] =>
    (JSON.parse(readFileSync(join(dir, "tokens.json"), "utf8")) as Array<{ id: string }>).map((t) => t.id);

  it("a create holds at once, and resolves only once the file keeps it", async () => {
    const { tokens, dir } = store();
    const pending = tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    expect(existsSync(join(dir, "tokens.json"))).toBe(false); // nothing written in the caller's turn
    const { id, token } = await pending;
    expect(tokens.check(token, T0)).toMatchObject({ ok: true, id });
    expect(onDisk(dir)).toEqual([id]);
  });

  it("a burst of 300 creates in one turn costs two writes, and every one of them is in the file when it resolves", async () => {
    const { tokens, dir } = store();
    const first = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const before = tokens.writes;
    const burst = Array.from({ length: 300 }, () => tokens.create({ scope: "observe", ttlMs: TTL, label: "l".repeat(200) }, T0));
    // One more during the write of the burst: it waits for the next write, never a third in flight.
    await new Promise((resolve) => setImmediate(resolve));
    const late = tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const made = await Promise.all([...burst, late]);
    expect(tokens.writes - before).toBeLessThanOrEqual(2);
    expect(onDisk(dir)).toEqual([first.id, ...made.map((t) => t.id)]);
  });

  it("a revoke refuses the token at once; the file drops it, and the listeners are told, by the time the revoke resolves", async () => {
    const { tokens, dir } = store();
    const { id, token } = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const revoked: string[] = [];
    tokens.onRevoke((gone) => revoked.push(gone));
    const pending = tokens.revoke(id, T0);
    expect(tokens.check(token, T0)).toEqual({ ok: false, reason: "wrong" });
    expect(tokens.invalidReason(id, T0)).toBe(`token ${id} has been revoked`);
    expect(onDisk(dir)).toEqual([id]); // not yet written
    expect(revoked).toEqual([]); // connections are closed once it is kept, after the revoking request's reply
    await pending;
    expect(onDisk(dir)).toEqual([]);
    expect(revoked).toEqual([id]);
  });

  it("a failed write answers unavailable, the tokens it would have kept never hold, and the file is the old one", async () => {
    const { tokens, dir } = store();
    const kept = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const file = join(dir, "tokens.json");
    const saved = readFileSync(file, "utf8");
    // A directory in the file's place: the rename over it fails (as root too, where modes do not).
    rmSync(file);
    mkdirSync(join(file, "x"), { recursive: true });
    const failing = tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const alongside = tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    await expect(failing).rejects.toMatchObject({ code: "unavailable", message: expect.stringContaining("the token was not issued") });
    await expect(alongside).rejects.toMatchObject({ code: "unavailable" });
    expect(tokens.list(T0).map((t) => t.id)).toEqual([kept.id]);
    expect(readdirSync(dir).filter((n) => n.includes(".tmp-"))).toEqual([]);
    rmSync(file, { recursive: true });
    writeFileSync(file, saved);
    expect(new TokenStore(dir).list(T0).map((t) => t.id)).toEqual([kept.id]);
  });

  it("a revoke whose write failed stays in force, and the daemon saves it once the file can be written again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hotline-tokens-"));
    dirs.push(dir);
    const tokens = new TokenStore(dir, 1000, 50);
    const { id, token } = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    const file = join(dir, "tokens.json");
    const saved = readFileSync(file, "utf8");
    rmSync(file);
    mkdirSync(join(file, "x"), { recursive: true });
    await expect(tokens.revoke(id, T0)).rejects.toMatchObject({ code: "unavailable", message: expect.stringContaining("saves it again") });
    expect(tokens.check(token, T0)).toEqual({ ok: false, reason: "wrong" });
    rmSync(file, { recursive: true });
    writeFileSync(file, saved); // the old table, with the token: as the failed write left it
    await vi.waitFor(() => expect(onDisk(dir)).toEqual([]), { timeout: 5000, interval: 20 });
  });

  it("a temporary file left by a crash mid-write is removed at start, and the table read is the last whole one", async () => {
    const { tokens, dir } = store();
    const kept = await tokens.create({ scope: "observe", ttlMs: TTL }, T0);
    writeFileSync(join(dir, "tokens.json.tmp-1-deadbeef"), '[{"id":"tcut');
    expect(new TokenStore(dir).list(T0).map((t) => t.id)).toEqual([kept.id]);
    expect(readdirSync(dir).filter((n) => n.includes(".tmp-"))).toEqual([]);
  });
});

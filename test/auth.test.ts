import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statSync } from "node:fs";
import { join } from "node:path";
import { TestClient, TestDaemon, useDaemon } from "./helpers/daemon.js";

describe("upgrade: token, origin, scopes", () => {
  let daemon: TestDaemon;

  beforeAll(async () => {
    daemon = await TestDaemon.start({ args: ["--allow-origin", "http://trusted.example"] });
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("creates the token file with mode 0600", () => {
    expect(statSync(join(daemon.dirs.config, "token")).mode & 0o777).toBe(0o600);
  });

  it("refuses an upgrade without a token with 401", async () => {
    await expect(TestClient.connect(daemon.url, undefined)).rejects.toMatchObject({ status: 401 });
  });

  it("refuses a wrong token with 401 and a structured body", async () => {
    const err = (await TestClient.connect(daemon.url, "nope").catch((e: unknown) => e)) as { status: number; body: string };
    expect(err.status).toBe(401);
    expect(JSON.parse(err.body).error.code).toBe("unauthorized");
  });

  it("refuses a browser Origin with 403 even with the right token", async () => {
    const err = (await TestClient.connect(daemon.url, daemon.token, { origin: "http://localhost:3000" }).catch((e: unknown) => e)) as {
      status: number;
      body: string;
    };
    expect(err.status).toBe(403);
    expect(JSON.parse(err.body).error.code).toBe("forbidden");
  });

  it("accepts an allow-listed Origin", async () => {
    const client = await TestClient.connect(daemon.url, daemon.token, { origin: "http://trusted.example" });
    expect((await client.ok("state.info")).name).toBe("hotline");
    await client.close();
  });

  it("never writes the token to the log", () => {
    expect(daemon.logLines.join("\n")).not.toContain(daemon.token);
  });

  it("lets an observe token read but not run, and refuses it once expired", async () => {
    const manage = await daemon.client();
    const { job } = await manage.ok("shell", { command: "echo visible", wait: 10_000 });
    const observe = await manage.ok("tokens.create", { scope: "observe" });
    const short = await manage.ok("tokens.create", { scope: "observe", ttlMs: 1000 });
    expect(observe.token).not.toBe(daemon.token);

    const viewer = await daemon.client({}, observe.token);
    expect((await viewer.ok("state.info")).scope).toBe("observe");
    expect((await viewer.ok("jobs.output", { job: job.id })).data).toBe("visible\n");
    const refused = await viewer.call("shell", { command: "true" });
    expect(refused.error.code).toBe("forbidden");
    const terminal = await viewer.call("shell", { command: "bash", pty: { cols: 80, rows: 24 } });
    expect(terminal.error.code).toBe("forbidden");
    const cancel = await viewer.call("jobs.cancel", { job: job.id });
    expect(cancel.error.code).toBe("forbidden");
    await viewer.close();

    // The short token expires: wait on the daemon's own clock via a job, not a sleep in the test.
    await manage.ok("shell", { command: "sleep 1.2", wait: 10_000 });
    await expect(TestClient.connect(daemon.url, short.token)).rejects.toMatchObject({ status: 401 });
    await manage.close();
  });
});

describe("issued tokens: lifetime, list, revoke", () => {
  const t = useDaemon();
  const closed = (client: TestClient): Promise<{ code: number; reason: string }> =>
    new Promise((resolve) => client.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));

  it("gives a token without ttlMs a lifetime of 24 hours, and lists it without its secret", async () => {
    const before = Date.now();
    const created = await t.client.ok("tokens.create", { scope: "observe", label: "watcher" });
    const lifetime = Date.parse(created.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
    const { tokens } = await t.client.ok("tokens.list");
    const listed = tokens.find((x: { id: string }) => x.id === created.id);
    expect(listed).toEqual({
      id: created.id,
      scope: "observe",
      createdAt: expect.any(String),
      expiresAt: created.expiresAt,
      label: "watcher",
      issuer: "primary",
    });
    expect(JSON.stringify(tokens)).not.toContain(created.token);
    expect(JSON.stringify(tokens)).not.toMatch(/[0-9a-f]{64}/); // no hash either
  });

  it("closes a connection with 4001 when its token expires, though it was opened before", async () => {
    const short = await t.client.ok("tokens.create", { scope: "observe", ttlMs: 1000 });
    const viewer = await t.daemon.client({}, short.token);
    expect((await viewer.ok("state.info")).scope).toBe("observe");
    const { code, reason } = await closed(viewer);
    expect(code).toBe(4001);
    expect(reason).toContain("expired");
    await expect(TestClient.connect(t.daemon.url, short.token)).rejects.toMatchObject({ status: 401 });
  });

  it("revokes a token at once: its open connections close with 4001, new upgrades get 401", async () => {
    const created = await t.client.ok("tokens.create", { scope: "manage", ttlMs: 3_600_000 });
    const user = await t.daemon.client({}, created.token);
    const { job } = await user.ok("shell", { command: "sleep 300" });
    await user.ok("jobs.follow", { job: job.id });
    const userClosed = closed(user);
    const { revoked } = await t.client.ok("tokens.revoke", { tokenId: created.id });
    expect(revoked).toMatchObject({ id: created.id, scope: "manage" });
    const { code, reason } = await userClosed;
    expect(code).toBe(4001);
    expect(reason).toContain("revoked");
    await expect(TestClient.connect(t.daemon.url, created.token)).rejects.toMatchObject({ status: 401 });
    expect((await t.client.ok("tokens.list")).tokens.map((x: { id: string }) => x.id)).not.toContain(created.id);
    // The job outlives the connection; the revoked token's owner just lost its door.
    expect((await t.client.ok("jobs.status", { job: job.id })).state).toBe("running");
    await t.client.ok("jobs.cancel", { job: job.id });
  });

  it("a connection that revokes its own token gets the reply, then closes with 4001", async () => {
    const created = await t.client.ok("tokens.create", { scope: "manage", ttlMs: 3_600_000 });
    const self = await t.daemon.client({}, created.token);
    const selfClosed = closed(self);
    expect((await self.ok("tokens.revoke", { tokenId: created.id })).revoked).toMatchObject({ id: created.id });
    expect((await selfClosed).code).toBe(4001);
  });

  it("refuses to revoke the token file's token or an unknown id", async () => {
    expect((await t.client.call("tokens.revoke", { tokenId: "primary" })).error).toMatchObject({
      code: "invalid_request",
      path: "/tokenId",
    });
    expect((await t.client.call("tokens.revoke", { tokenId: "tnope" })).error).toMatchObject({ code: "not_found", path: "/tokenId" });
    expect((await t.client.ok("state.info")).scope).toBe("manage");
  });
});

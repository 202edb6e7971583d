import { connect } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { useDaemon } from "../helpers/daemon.js";
import { SshClients } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);
const GRACE_MS = 5000;

describe.skipIf(!haveSsh)("SSH: the credential (expiry, revocation, refusal) with the real OpenSSH client", () => {
  const ctx = useDaemon({ args: ["--ssh-login-grace-ms", String(GRACE_MS)] });
  const clients = new SshClients();
  afterEach(() => clients.killAll());
  afterAll(() => clients.cleanup());

  it("a wrong credential is refused (Permission denied), logged at info without the secret", async () => {
    const access = await clients.open(ctx.client);
    const wrongUser = `hlssh_${"A".repeat(43)}`;
    const run = await clients.ssh({ ...access, sshCommand: access.sshCommand.replace(access.sshUser, wrongUser) }, [], "echo hi");
    expect(run.code).toBe(255);
    expect(run.stderr).toContain("Permission denied");
    const refused = ctx.daemon.logLines.filter((l) => l.includes("ssh: credential refused"));
    expect(refused.length).toBeGreaterThan(0);
    expect(JSON.parse(refused[0]!)).toMatchObject({ level: 30, reason: "wrong" });
    expect(ctx.daemon.logLines.join("\n")).not.toContain(wrongUser);
    expect(ctx.daemon.logLines.join("\n")).not.toContain(access.sshUser);
  });

  it("after expiresAt a new connection is refused, while a session opened before keeps running", async () => {
    const access = await clients.open(ctx.client, { ttlMs: 10_000 });
    const session = await clients.openSession(access);
    const wait = Date.parse(access.expiresAt) - Date.now() + 200;
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    const late = await clients.ssh(access, [], "echo hi");
    expect(late.code).toBe(255);
    expect(late.stderr).toContain("Permission denied");
    session.child.stdin?.write("still here\n");
    await expect.poll(session.stdout, { timeout: 30_000 }).toContain("still here\n");
    session.child.stdin?.end();
    expect((await session.ended).code).toBe(0);
  });

  it("revoking the credential closes its open session within a second, and refuses it afterwards", async () => {
    const access = await clients.open(ctx.client);
    const session = await clients.openSession(access);
    const revokedAt = Date.now();
    await ctx.client.ok("tokens.revoke", { tokenId: access.tokenId });
    const ended = await session.ended;
    const tookMs = Date.now() - revokedAt;
    console.log(`[measure] revoke → session closed in ${tookMs} ms`);
    expect(ended.code).not.toBe(0);
    // The session ended because of the revoke (it would stay open otherwise); how soon is the measured
    // line, not asserted: on a loaded machine a wall-clock bound measures the machine.
    const again = await clients.ssh(access, [], "echo hi");
    expect(again.code).toBe(255);
    expect(again.stderr).toContain("Permission denied");
  });

  it("an observe token gets forbidden from ssh.open", async () => {
    const observe = await ctx.client.ok("tokens.create", { scope: "observe", ttlMs: 60_000 });
    const client = await ctx.daemon.client({}, observe.token);
    try {
      const reply = await client.call("ssh.open", {});
      expect(reply).toMatchObject({ ok: false, error: { code: "forbidden" } });
    } finally {
      await client.close();
    }
  });

  it("a connection that does not authenticate is closed after sshLoginGraceMs", async () => {
    const info = await ctx.client.ok("state.info");
    expect(info.ssh).toMatchObject({ available: true, host: "127.0.0.1" });
    const socket = connect(info.ssh.port, "127.0.0.1");
    let banner = "";
    socket.on("data", (d: Buffer) => (banner += d.toString()));
    const started = Date.now();
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(banner).toMatch(/^SSH-2\.0-hotline/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(GRACE_MS - 100);
    // The log line and the close travel apart (stderr pipe, TCP): the line may be read just after.
    const logged = () => ctx.daemon.logLines.some((l) => l.includes("no authentication in time"));
    for (const until = Date.now() + 5000; !logged() && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    expect(logged()).toBe(true);
  });
});

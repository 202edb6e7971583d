import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { FAILURES_PER_WINDOW } from "../../daemon/ssh/auth.js";
import { rssMiB } from "../fs/helpers.js";
import { useDaemon } from "../helpers/daemon.js";
import { SshClients } from "../helpers/ssh.js";
import { toolAvailable } from "../helpers/tools.js";

const haveSsh = toolAvailable("ssh", ["-V"]);
const MAX_CONNECTIONS = 3;
/** Wrong credentials from one address in the lock-out case (issue 33: 25 locked 127.0.0.1 out for a minute). */
const WRONG = 25;

// Issue 23, Budgets and Expiry: concurrent connections are bounded. Issue 33, items 6 and 7:
// unauthenticated sockets never fill that budget, and wrong credentials never lock a good one out.
describe.skipIf(!haveSsh)("SSH: connection budget and refusal rate limit, with the real OpenSSH client", () => {
  const ctx = useDaemon({ args: ["--ssh-max-connections", String(MAX_CONNECTIONS)] });
  const clients = new SshClients();
  const sockets: Socket[] = [];
  afterEach(() => {
    clients.killAll();
    for (const s of sockets.splice(0)) s.destroy();
  });
  afterAll(() => clients.cleanup());

  it("garbage on the SSH port (random bytes, a 1 MiB version line, a packet claiming 4 GiB) ends that connection only", async () => {
    const access = await clients.open(ctx.client);
    const before = rssMiB(ctx.daemon.proc.pid!);
    const version = Buffer.from("SSH-2.0-OpenSSH_9.2\r\n");
    const huge = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0a, 0x14]);
    for (const payload of [randomBytes(1 << 20), Buffer.alloc(1 << 20, "S"), Buffer.concat([version, huge, randomBytes(64 * 1024)])]) {
      const socket = connect(access.sshPort as number, "127.0.0.1");
      socket.on("error", () => {});
      socket.on("data", () => {});
      socket.write(payload);
      await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    }
    expect((await ctx.client.ok("state.info")).ssh).toMatchObject({ available: true });
    expect(rssMiB(ctx.daemon.proc.pid!) - before).toBeLessThan(64);
    expect((await clients.ssh(access, [], "echo hi")).stdout).toBe("hi\n");
  });

  it(`past sshMaxConnections (${MAX_CONNECTIONS}) authenticated connections a new one is refused at once, and accepted again once one closes`, async () => {
    const access = await clients.open(ctx.client);
    const sessions = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) sessions.push(await clients.openSession(access));
    const refused = await clients.ssh(access, [], "echo hi");
    expect(refused.code).toBe(255);
    expect(refused.stdout).toBe("");
    expect(ctx.daemon.logLines.some((l) => l.includes("ssh: connection refused, the most allowed are open"))).toBe(true);
    const first = sessions.shift()!;
    first.child.stdin?.end();
    expect((await first.ended).code).toBe(0);
    await expect.poll(async () => (await clients.ssh(access, [], "echo hi")).stdout, { timeout: 10_000 }).toBe("hi\n");
    for (const s of sessions) s.child.stdin?.end();
    await Promise.all(sessions.map((s) => s.ended));
  });

  it(`unauthenticated sockets never keep a user out: past ${MAX_CONNECTIONS} of them the oldest is closed`, async () => {
    const access = await clients.open(ctx.client);
    for (let i = 0; i < MAX_CONNECTIONS; i++) {
      const socket = connect(access.sshPort as number, "127.0.0.1");
      socket.on("error", () => {});
      await new Promise<void>((resolve) => socket.once("data", () => resolve())); // the server's version line: admitted
      sockets.push(socket);
    }
    expect(await clients.ssh(access, [], "echo hi")).toMatchObject({ code: 0, stdout: "hi\n" });
    expect(sockets[0]!.destroyed || sockets[0]!.readableEnded).toBe(true);
  });

  it(`${WRONG} wrong credentials from one address lock nobody out: a good one from it still gets in, and the refusals past ${FAILURES_PER_WINDOW} are not logged one by one`, async () => {
    const access = await clients.open(ctx.client);
    const wrong = { ...access, sshCommand: access.sshCommand.replace(access.sshUser, `hlssh_${"B".repeat(43)}`) };
    const loggedFrom = ctx.daemon.logLines.length;
    // A few at a time, within the connection budget.
    for (let done = 0; done < WRONG; done += MAX_CONNECTIONS - 1) {
      const runs = await Promise.all(
        Array.from({ length: Math.min(MAX_CONNECTIONS - 1, WRONG - done) }, () => clients.ssh(wrong, [], "true")),
      );
      for (const r of runs) expect(r.stderr).toContain("Permission denied");
    }
    const good = await clients.ssh(access, [], "echo hi");
    expect(good).toMatchObject({ code: 0, stdout: "hi\n" });
    // Still refused after the good one: a success forgives nothing.
    expect((await clients.ssh(wrong, [], "true")).stderr).toContain("Permission denied");
    const lines = ctx.daemon.logLines.slice(loggedFrom);
    const refusals = lines.filter((l) => l.includes("ssh: credential refused"));
    expect(refusals.length).toBe(FAILURES_PER_WINDOW);
    expect(lines.some((l) => l.includes("ssh: more credentials refused from this address"))).toBe(true);
    expect(lines.join("\n")).not.toContain(access.sshUser);
  });
});

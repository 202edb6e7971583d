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

// Issue 23, Budgets and Expiry: concurrent connections are bounded; wrong credentials are
// rate-limited per source address (then even a good one is refused until the window ends).
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

  it(`past sshMaxConnections (${MAX_CONNECTIONS}) a connection is refused at once, and accepted again once one closes`, async () => {
    const access = await clients.open(ctx.client);
    // Unauthenticated sockets count too: a client that never logs in cannot push the budget aside.
    for (let i = 0; i < MAX_CONNECTIONS; i++) {
      const socket = connect(access.sshPort as number, "127.0.0.1");
      socket.on("error", () => {});
      await new Promise<void>((resolve) => socket.once("data", () => resolve())); // the server's version line: admitted
      sockets.push(socket);
    }
    const refused = await clients.ssh(access, [], "echo hi");
    expect(refused.code).toBe(255);
    expect(refused.stdout).toBe("");
    expect(ctx.daemon.logLines.some((l) => l.includes("ssh: connection refused, the most allowed are open"))).toBe(true);
    const closed = sockets.pop()!;
    await new Promise<void>((resolve) => closed.once("close", () => resolve()).destroy());
    await expect.poll(async () => (await clients.ssh(access, [], "echo hi")).stdout, { timeout: 10_000 }).toBe("hi\n");
  });

  it(`after ${FAILURES_PER_WINDOW} wrong credentials from one address, even a good one from it is refused (logged rate_limited)`, async () => {
    const access = await clients.open(ctx.client);
    const wrong = { ...access, sshCommand: access.sshCommand.replace(access.sshUser, `hlssh_${"B".repeat(43)}`) };
    // A few at a time, within the connection budget.
    for (let done = 0; done < FAILURES_PER_WINDOW; done += MAX_CONNECTIONS - 1) {
      const runs = await Promise.all(
        Array.from({ length: Math.min(MAX_CONNECTIONS - 1, FAILURES_PER_WINDOW - done) }, () => clients.ssh(wrong, [], "true")),
      );
      for (const r of runs) expect(r.stderr).toContain("Permission denied");
    }
    const good = await clients.ssh(access, [], "echo hi");
    expect(good.code).toBe(255);
    expect(good.stderr).toContain("Permission denied");
    const limited = ctx.daemon.logLines.filter((l) => l.includes("ssh: credential refused") && l.includes("rate_limited"));
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.join("\n")).not.toContain(access.sshUser);
  });
});

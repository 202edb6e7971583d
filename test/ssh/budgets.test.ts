import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { useDaemon } from "../helpers/daemon.js";
import { collect, pasted, SshClients } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);
const MAX_CHANNELS = 50;
const CHANNELS = 200;

describe.skipIf(!haveSsh)("SSH: budgets with the real OpenSSH client", () => {
  const ctx = useDaemon({ args: ["--ssh-max-channels", String(MAX_CHANNELS)] });
  const clients = new SshClients();
  afterEach(() => clients.killAll());
  afterAll(() => clients.cleanup());

  it(`${CHANNELS} parallel channels on one ControlMaster connection: ${MAX_CHANNELS} open, the rest refused clearly, state.info answers throughout`, async () => {
    const access = await clients.open(ctx.client);
    const control = join(clients.home, "cm");
    const mux = ["-o", `ControlPath=${control}`];
    clients.spawn("bash", ["-c", pasted(access, [...clients.options(access), ...mux, "-o", "ControlMaster=yes", "-N"])]);
    await expect
      .poll(async () => (await clients.run("ssh", ["-o", `ControlPath=${control}`, "-O", "check", "x"])).code, { timeout: 30_000 })
      .toBe(0);

    // state.info every 50 ms while the channels open and run: the slowest answer is the measure.
    let slowest = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const t = performance.now();
        await ctx.client.ok("state.info").catch(() => (polling = false));
        slowest = Math.max(slowest, performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    // Mux clients name port 1: should the master's socket be busy, a client cannot fall back to a connection of its own.
    const muxClient = () => {
      const child = clients.spawn(
        "ssh",
        [...clients.options(access), ...mux, "-o", "ControlMaster=no", "-p", "1", `${access.sshUser}@127.0.0.1`, "echo started; exec cat"],
        { stdio: ["pipe", "pipe", "pipe"] },
      );
      let stdout = "";
      child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
      const ended = collect(child);
      const session = { child, stdout: () => stdout, ended, settled: false };
      void ended.then(() => (session.settled = true));
      return session;
    };
    // In waves of 20, each settled (running, or refused and exited) before the next: all 200 are asked for on the one connection.
    const sessions: Array<ReturnType<typeof muxClient>> = [];
    while (sessions.length < CHANNELS) {
      const wave = Array.from({ length: 20 }, muxClient);
      sessions.push(...wave);
      await expect
        .poll(() => wave.every((s) => s.settled || s.stdout().includes("started")), { timeout: 60_000, interval: 100 })
        .toBe(true);
    }
    const running = sessions.filter((s) => s.stdout().includes("started"));
    const refused = sessions.filter((s) => !s.stdout().includes("started"));
    expect(running.length).toBe(MAX_CHANNELS);
    const refusal = await refused[0]!.ended;
    expect(refusal.code).toBe(255);
    expect(refusal.stderr).toContain("Session open refused by peer");
    expect(ctx.daemon.logLines.some((l) => l.includes("channel refused, the connection has the most allowed open"))).toBe(true);

    for (const s of running) s.child.stdin?.end();
    expect((await Promise.all(running.map((s) => s.ended))).map((r) => r.code)).toEqual(Array(MAX_CHANNELS).fill(0));
    polling = false;
    await poller;
    console.log(`[measure] slowest state.info during ${CHANNELS} channels: ${slowest.toFixed(1)} ms`);
    expect(slowest).toBeLessThan(2000); // 100 ms on a quiet machine; generous here (see the measured line)

    // The budget is free again once they closed.
    const after = await clients.ssh(access, [...mux, "-o", "ControlMaster=no"], "echo again");
    expect(after).toMatchObject({ code: 0, stdout: "again\n" });
  });
});

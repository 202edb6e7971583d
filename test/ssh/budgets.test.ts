import { join } from "node:path";
import { Client as Ssh2Client } from "ssh2";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { useDaemon } from "../helpers/daemon.js";
import { pollInfoInWorker } from "../helpers/info-poller.js";
import { describeStall, stallsOverBudget } from "../helpers/stalls.js";
import { collect, pasted, SshClients } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);
const MAX_CHANNELS = 50;
const CHANNELS = 200;
/** Channels of the burst case, within the default budget (sshMaxChannels 128). */
const BURST = 120;

describe.skipIf(!haveSsh)("SSH: budgets with the real OpenSSH client", () => {
  const ctx = useDaemon({ args: ["--ssh-max-channels", String(MAX_CHANNELS)] });
  const clients = new SshClients();
  afterEach(() => clients.killAll());
  afterAll(() => clients.cleanup());

  it(`${CHANNELS} parallel channels on one ControlMaster connection: ${MAX_CHANNELS} open, the rest refused clearly, state.info answers throughout`, async () => {
    const access = await clients.open(ctx.client);
    const control = join(clients.home, "cm");
    const mux = ["-o", `ControlPath=${control}`];
    // INFO: the master logs each refused channel with the daemon's reason.
    const master = clients.spawn("bash", [
      "-c",
      pasted(access, [...clients.options(access, "INFO"), ...mux, "-o", "ControlMaster=yes", "-N"]),
    ]);
    let masterLog = "";
    master.stderr?.on("data", (c: Buffer) => (masterLog += c.toString()));
    await expect
      .poll(async () => (await clients.run("ssh", ["-o", `ControlPath=${control}`, "-O", "check", "x"])).code, { timeout: 30_000 })
      .toBe(0);

    // state.info every 20 ms while the channels open and run, from a worker thread: this test's own
    // loop blocks in each of its 200 spawns, and a poller on it measured that (up to 500 ms), not the daemon.
    const poller = pollInfoInWorker(ctx.daemon.url, ctx.daemon.token);
    const stallsFrom = ctx.daemon.stalls.length;

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
    expect(masterLog).toContain(`open failed: resource shortage: the connection has ${MAX_CHANNELS} channels open, the most allowed`);
    expect(ctx.daemon.logLines.some((l) => l.includes("channel refused, the connection has the most allowed open"))).toBe(true);

    for (const s of running) s.child.stdin?.end();
    expect((await Promise.all(running.map((s) => s.ended))).map((r) => r.code)).toEqual(Array(MAX_CHANNELS).fill(0));
    const { samples, worstMs } = await poller.stop();
    const { eventLoop } = await ctx.client.ok("state.info");
    const median = samples[Math.floor(samples.length / 2)]!;
    console.log(
      `[measure] state.info during ${CHANNELS} channels (${samples.length} samples): median ${median.toFixed(1)} ms, slowest ${worstMs.toFixed(1)} ms; daemon eventLoop.maxMs ${eventLoop.maxMs}, stalls ${ctx.daemon.stalls.length - stallsFrom}`,
    );
    // The watchdog's figure, not the round trips' wall-clock time (on a loaded machine that measures
    // the machine): no turn the daemon itself spent went over the suite's budget.
    expect(samples.length).toBeGreaterThan(0);
    expect(stallsOverBudget(ctx.daemon, stallsFrom).map(describeStall)).toEqual([]);

    // The budget is free again once they closed.
    const after = await clients.ssh(access, [...mux, "-o", "ControlMaster=no"], "echo again");
    expect(after).toMatchObject({ code: 0, stdout: "again\n" });
  });
});

describe.skipIf(!haveSsh)("SSH: a burst of channels on one connection", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  afterAll(() => clients.cleanup());

  it(`${BURST} exec channels asked for in one burst on one connection: all run, and no turn of the daemon's goes over the watchdog's budget`, async () => {
    // OpenSSH opens a connection's channels one client at a time; a library client (ssh2's here,
    // as JetBrains' or Paramiko's) sends every CHANNEL_OPEN and exec request in one write, which
    // the daemon reads in one turn: without the turn budget it forked all of them in that turn.
    const access = await clients.open(ctx.client);
    const stallsFrom = ctx.daemon.stalls.length;
    const conn = new Ssh2Client();
    await new Promise<void>((resolve, reject) => {
      conn.once("ready", () => resolve()).once("error", reject);
      conn.connect({
        host: "127.0.0.1",
        port: access.sshPort as number,
        username: access.sshUser,
        hostVerifier: () => true,
        readyTimeout: 30_000,
      });
    });
    const codes = await Promise.all(
      Array.from(
        { length: BURST },
        (_, i) =>
          new Promise<number>((resolve, reject) =>
            conn.exec(`echo ${i}`, (err, stream) => {
              if (err) return reject(err);
              stream.resume();
              stream.stderr.resume();
              stream.once("exit", (code: number) => resolve(code));
            }),
          ),
      ),
    );
    conn.end();
    expect(codes).toEqual(Array(BURST).fill(0));
    const { eventLoop } = await ctx.client.ok("state.info");
    const stalls = ctx.daemon.stalls.slice(stallsFrom).map(describeStall);
    console.log(
      `[measure] ${BURST} exec channels in one burst: daemon eventLoop.maxMs ${eventLoop.maxMs}, turns over 100 ms: ${JSON.stringify(stalls)}`,
    );
    expect(stallsOverBudget(ctx.daemon, stallsFrom).map(describeStall)).toEqual([]);
  });
});

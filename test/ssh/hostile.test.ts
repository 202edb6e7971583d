import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Client as Ssh2Client, type ClientChannel } from "ssh2";
import { afterAll, afterEach, describe, expect, it, onTestFinished } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { pollInfoInWorker } from "../helpers/info-poller.js";
import { SshClients } from "../helpers/ssh.js";
import { describeStall, stallsOverBudget } from "../helpers/stalls.js";
import { toolAvailable } from "../helpers/tools.js";
import { bareKeyExchange, RawSsh, serverOffer } from "./raw.js";

const haveSsh = toolAvailable("ssh", ["-V"]);

/** A field of /proc/PID/status in MiB (VmRSS, VmData). */
function statusMiB(pid: number, field: "VmRSS" | "VmData"): number {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kb / 1024);
}

/** Samples `read` every 50 ms until `until` settles; the highest value seen. */
async function peakWhile(read: () => number, until: Promise<unknown>): Promise<number> {
  let peak = read();
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, read());
    await sleep(50);
  }
  return Math.max(peak, read());
}

// Issue 33, items 2, 3, 6 and 8: what a stranger (or a hostile client) can do to the SSH port.
describe.skipIf(!haveSsh)("SSH: hostile clients on the SSH port", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  const sockets: Socket[] = [];
  afterEach(() => {
    clients.killAll();
    for (const s of sockets.splice(0)) s.destroy();
  });
  afterAll(() => clients.cleanup());

  it("offers only cheap key exchanges (curve25519, ecdh-sha2-nistp256), and the OpenSSH client agrees on curve25519", async () => {
    const access = await clients.open(ctx.client);
    const offer = await serverOffer(access.sshPort);
    const methods = offer.kex.filter((k) => !k.startsWith("kex-strict-") && !k.startsWith("ext-info-"));
    expect(methods).toEqual(["curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256"]);
    const run = await clients.ssh(access, ["-v"], "echo hi");
    expect(run.stdout).toBe("hi\n");
    expect(run.stderr).toContain("kex: algorithm: curve25519-sha256");
  });

  it("16 strangers running bare key exchanges back to back (the dearest method offered): no turn of the daemon over the watchdog's budget", async () => {
    const CLIENTS = 16;
    const ROUNDS = 4;
    const sshPort = (await ctx.client.ok("state.info")).ssh.port as number;
    const stallsFrom = ctx.daemon.stalls.length;
    const poller = pollInfoInWorker(ctx.daemon.url, ctx.daemon.token);
    const used = new Set<string>();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < ROUNDS; i++) used.add(await bareKeyExchange(sshPort));
      }),
    );
    const { samples, worstMs } = await poller.stop();
    const { eventLoop } = await ctx.client.ok("state.info");
    const p99 = samples[Math.floor(samples.length * 0.99)] ?? 0;
    console.log(
      `[measure] ${CLIENTS} clients × ${ROUNDS} bare key exchanges (${[...used].join(", ")}): state.info p99 ${p99.toFixed(1)} ms, slowest ${worstMs.toFixed(1)} ms (${samples.length} samples); daemon eventLoop.maxMs ${eventLoop.maxMs}; stalls ${JSON.stringify(ctx.daemon.stalls.slice(stallsFrom).map(describeStall))}`,
    );
    expect(used).toEqual(new Set(["ecdh-sha2-nistp256"]));
    expect(stallsOverBudget(ctx.daemon, stallsFrom).map(describeStall)).toEqual([]);
  });

  it("a turn stalled while an SSH handshake is in flight is blamed on it, not on what else ran", async () => {
    const sshPort = (await ctx.client.ok("state.info")).ssh.port as number;
    const raw = new RawSsh(sshPort);
    onTestFinished(() => raw.destroy());
    raw.send("SSH-2.0-x\r\n");
    await raw.ident();
    await sleep(200); // state.info is no longer among the recent work when the loop freezes
    const stallsFrom = ctx.daemon.stalls.length;
    ctx.daemon.stallsExpected = true;
    onTestFinished(() => void (ctx.daemon.stallsExpected = false));
    ctx.daemon.proc.kill("SIGSTOP");
    await sleep(400);
    ctx.daemon.proc.kill("SIGCONT");
    await expect.poll(() => ctx.daemon.stalls.length, { timeout: 15_000 }).toBeGreaterThan(stallsFrom);
    // The metrics sampler's periodic slice may be in flight too ("one of: ssh handshake, metrics sampler").
    const cause = ctx.daemon.stalls[stallsFrom]!.cause;
    expect(cause).toMatch(/^ssh handshake \(in flight\)$|^one of: .*ssh handshake/);
    expect(cause).not.toContain("state.info");
  });

  it("16 connections announcing a 2 GiB packet, then sending 64 KiB more: each is dropped at the bad length, nothing is allocated, jobs still start", async () => {
    const sshPort = (await ctx.client.ok("state.info")).ssh.port as number;
    const pid = ctx.daemon.proc.pid!;
    const before = statusMiB(pid, "VmData");
    // 2 GiB - 4: a length ssh2 reads as positive (a 4 GiB one wraps negative) and a multiple of 8 with its own 4 bytes.
    const length = Buffer.alloc(5);
    length.writeUInt32BE(0x7ffffffc);
    const raws = Array.from({ length: 16 }, () => new RawSsh(sshPort, "127.0.0.1", { allowHalfOpen: true }));
    onTestFinished(() => {
      for (const raw of raws) raw.destroy();
    });
    for (const raw of raws) raw.send(Buffer.concat([Buffer.from("SSH-2.0-x\r\n"), length]));
    // Once the server has ended its side (it has read the length and given up), the rest arrives in reads of its own.
    await Promise.all(raws.map((raw) => raw.serverEnded()));
    for (const raw of raws) raw.send(Buffer.alloc(64 * 1024, 0x41));
    const peak = await peakWhile(() => statusMiB(pid, "VmData"), Promise.all(raws.map((raw) => raw.closedByServer())));
    const shell = await ctx.client.ok("shell", { command: "echo still-starting" });
    const waited = await ctx.client.ok("jobs.wait", { job: shell.job.id, timeoutMs: 30_000 });
    console.log(`[measure] 16 sockets with a 2 GiB packet length: daemon VmData ${before} → peak ${peak} MiB`);
    expect(waited.job).toMatchObject({ state: "succeeded", exitCode: 0 });
    expect(peak - before).toBeLessThan(512);
    expect(ctx.daemon.logLines.some((l) => l.includes("ssh: protocol error; connection dropped") && l.includes("Bad packet length"))).toBe(
      true,
    );
  });

  it("70 silent TCP connections: the oldest unauthenticated ones are closed, and an OpenSSH user gets in", async () => {
    const access = await clients.open(ctx.client);
    const silent = Array.from({ length: 70 }, () => {
      const socket = connect(access.sshPort, "127.0.0.1");
      socket.on("error", () => {});
      socket.on("data", () => {});
      sockets.push(socket);
      return socket;
    });
    await Promise.all(silent.map((s) => new Promise<void>((resolve) => s.once("connect", () => resolve()).once("close", () => resolve()))));
    const run = await clients.ssh(access, [], "echo in");
    expect(run).toMatchObject({ code: 0, stdout: "in\n" });
    const closed = silent.filter((s) => s.destroyed || s.readableEnded).length;
    console.log(`[measure] 70 silent sockets, then ssh: ${closed} silent sockets closed by the daemon`);
    expect(closed).toBeGreaterThanOrEqual(70 + 1 - 64);
    expect(ctx.daemon.logLines.some((l) => l.includes("ssh: the oldest unauthenticated connection closed"))).toBe(true);
  });

  it("a client that widens its window to 1 GiB and stops reading, with `yes` on an exec channel: the daemon holds a bounded backlog", async () => {
    const access = await clients.open(ctx.client);
    const pid = ctx.daemon.proc.pid!;
    const conn = new Ssh2Client();
    onTestFinished(() => void conn.end());
    await new Promise<void>((resolve, reject) => {
      conn.once("ready", () => resolve()).once("error", reject);
      conn.connect({ host: "127.0.0.1", port: access.sshPort, username: access.sshUser, hostVerifier: () => true, readyTimeout: 30_000 });
    });
    const stream = await new Promise<ClientChannel>((resolve, reject) => conn.exec("yes", (err, s) => (err ? reject(err) : resolve(s))));
    let got = 0;
    stream.on("data", (c: Buffer) => (got += c.length));
    await expect.poll(() => got, { timeout: 30_000 }).toBeGreaterThan(0);
    const before = statusMiB(pid, "VmRSS");
    // ssh2 keeps the protocol as `_protocol` and the socket as `_sock`: a window adjust of 1 GiB, then no more reading.
    const client = conn as unknown as { _protocol: { channelWindowAdjust(id: number, n: number): void }; _sock: Socket };
    client._protocol.channelWindowAdjust((stream as unknown as { outgoing: { id: number } }).outgoing.id, 2 ** 30);
    client._sock.pause();
    let peak = before;
    for (let waited = 0; waited < 4000; waited += 200) {
      await sleep(200);
      peak = Math.max(peak, statusMiB(pid, "VmRSS"));
    }
    console.log(`[measure] yes to a client with a 1 GiB window that reads nothing, 4 s: daemon VmRSS ${before} → peak ${peak} MiB`);
    expect(peak - before).toBeLessThan(64);
    // It flows again once the client reads.
    const resumedFrom = got;
    client._sock.resume();
    await expect.poll(() => got - resumedFrom, { timeout: 30_000 }).toBeGreaterThan(4 * 1024 * 1024);
  });

  it("a window-change to 0×0 on one session leaves the connection and its other sessions running", async () => {
    const access = await clients.open(ctx.client);
    const conn = new Ssh2Client();
    onTestFinished(() => void conn.end());
    await new Promise<void>((resolve, reject) => {
      conn.once("ready", () => resolve()).once("error", reject);
      conn.connect({ host: "127.0.0.1", port: access.sshPort, username: access.sshUser, hostVerifier: () => true, readyTimeout: 30_000 });
    });
    const output = (channel: ClientChannel) => {
      let text = "";
      channel.on("data", (c: Buffer) => (text += c.toString()));
      return () => text;
    };
    const shell = await new Promise<ClientChannel>((resolve, reject) =>
      conn.shell({ term: "xterm", cols: 80, rows: 24 }, (err, s) => (err ? reject(err) : resolve(s))),
    );
    const shellOut = output(shell);
    const cat = await new Promise<ClientChannel>((resolve, reject) => conn.exec("cat", (err, s) => (err ? reject(err) : resolve(s))));
    const catOut = output(cat);
    shell.write("echo ready-$((2*4))\n");
    await expect.poll(shellOut, { timeout: 30_000 }).toContain("ready-8");
    shell.setWindow(0, 0, 0, 0);
    cat.write("still-here\n");
    await expect.poll(catOut, { timeout: 30_000 }).toContain("still-here");
    shell.write("echo shell-$((3*3)); stty size\n");
    await expect.poll(shellOut, { timeout: 30_000 }).toContain("shell-9");
    await expect.poll(shellOut, { timeout: 30_000 }).toContain("24 80");
  });
});

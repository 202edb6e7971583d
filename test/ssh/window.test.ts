import { execFileSync } from "node:child_process";
import { type AddressInfo, connect, createServer, type Server } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { rssMiB } from "../fs/helpers.js";
import { useDaemon } from "../helpers/daemon.js";
import { pasted, SshClients } from "../helpers/ssh.js";
import { toolAvailable } from "../helpers/tools.js";

const haveSsh = toolAvailable("ssh", ["-V"]);
/** How long a producer pushes at a reader that takes nothing: gigabytes, were anything buffered without bound. */
const HOLD_MS = 4000;
/** The daemon's RSS growth allowed meanwhile: the SSH windows (2 MiB each) and pipes, with room for noise. */
const RSS_BOUND_MIB = 64;

/** Pids of processes whose command line contains `marker`, "" when none. */
function running(marker: string): string {
  const pattern = `[${marker[0]}]${marker.slice(1)}`;
  return execFileSync("sh", ["-c", `pgrep -f '${pattern}' || true`], { encoding: "utf8" }).trim();
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Issue 23, Budgets: "every channel honours the SSH window (no unbounded buffering of a forwarded
// socket or a slow client)", and exec channels "killed with their session".
describe.skipIf(!haveSsh)("SSH: the window holds a fast producer to its slow reader, with the real OpenSSH client", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  let server: Server | undefined;
  afterEach(() => {
    clients.killAll();
    server?.close();
  });
  afterAll(() => clients.cleanup());

  it("a command printing without end to a client that reads nothing: the daemon buffers a window's worth, not the output", async () => {
    const access = await clients.open(ctx.client);
    const pid = ctx.daemon.proc.pid!;
    const before = rssMiB(pid);
    // Nobody reads the client's stdout: its pipe fills, ssh stops taking channel data, the window closes.
    const child = clients.spawn("bash", ["-c", pasted(access, clients.options(access), "exec cat /dev/zero")]);
    let flowing = false;
    child.stdout!.once("data", () => {
      flowing = true;
      child.stdout!.pause();
    });
    await expect.poll(() => flowing, { timeout: 30_000 }).toBe(true);
    let peak = before;
    for (let waited = 0; waited < HOLD_MS; waited += 200) {
      await pause(200);
      peak = Math.max(peak, rssMiB(pid));
    }
    console.log(`[measure] exec cat /dev/zero to a client reading nothing for ${HOLD_MS} ms: daemon RSS ${before} → peak ${peak} MiB`);
    expect(peak - before).toBeLessThan(RSS_BOUND_MIB);
    // The reader starts: the output flows again.
    let got = 0;
    child.stdout!.on("data", (c: Buffer) => (got += c.length));
    child.stdout!.resume();
    await expect.poll(() => got, { timeout: 30_000 }).toBeGreaterThan(16 * 1024 * 1024);
  });

  it("ssh -L from a server writing without end to a local reader that reads nothing: the server is held back by the window", async () => {
    let pushed = 0;
    const chunk = Buffer.alloc(64 * 1024, 1);
    server = createServer((socket) => {
      socket.on("error", () => {});
      const pump = (): void => {
        while (!socket.destroyed) {
          pushed += chunk.length;
          if (!socket.write(chunk)) return void socket.once("drain", pump);
        }
      };
      pump();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const target = (server.address() as AddressInfo).port;
    const local = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const access = await clients.open(ctx.client);
    clients.spawn("bash", ["-c", pasted(access, [...clients.options(access), "-N", "-L", `${local}:127.0.0.1:${target}`])]);
    const pid = ctx.daemon.proc.pid!;
    const before = rssMiB(pid);
    const reader = await new Promise<import("node:net").Socket>((resolve, reject) => {
      const tryOnce = (left: number): void => {
        const s = connect(local, "127.0.0.1", () => resolve(s));
        s.once("error", (err) => (left > 0 ? setTimeout(() => tryOnce(left - 1), 100) : reject(err)));
      };
      tryOnce(300);
    });
    reader.pause(); // takes nothing
    await expect.poll(() => pushed, { timeout: 30_000 }).toBeGreaterThan(0);
    let peak = before;
    for (let waited = 0; waited < HOLD_MS; waited += 200) {
      await pause(200);
      peak = Math.max(peak, rssMiB(pid));
    }
    const held = pushed;
    await pause(500);
    console.log(
      `[measure] ssh -L, reader taking nothing for ${HOLD_MS} ms: server pushed ${(held / 2 ** 20).toFixed(1)} MiB; daemon RSS ${before} → peak ${peak} MiB`,
    );
    expect(pushed - held).toBeLessThanOrEqual(chunk.length); // stopped, not trickling at a buffer's pace
    expect(held).toBeLessThan(64 * 1024 * 1024); // socket buffers and two windows, not gigabytes
    expect(peak - before).toBeLessThan(RSS_BOUND_MIB);
    reader.destroy();
  });

  it("a command's processes end when its client is killed (no CLOSE sent): the daemon hangs them up", async () => {
    const access = await clients.open(ctx.client);
    const child = clients.spawn("bash", ["-c", pasted(access, clients.options(access), "echo started; exec sleep 987.321")]);
    let stdout = "";
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
    await expect.poll(() => stdout, { timeout: 30_000 }).toContain("started");
    expect(running("sleep 987.321")).not.toBe("");
    process.kill(-child.pid!, "SIGKILL");
    await expect.poll(() => running("sleep 987.321"), { timeout: 15_000, interval: 100 }).toBe("");
  });
});

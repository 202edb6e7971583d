import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it, onTestFinished } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { describeStall } from "../helpers/stalls.js";
import { freePort, previewRequest } from "./helpers.js";

/**
 * Issue 33 #10: with tens of thousands of TCP sockets open in the sandbox, ports.list, ports.wait's
 * polls and preview requests to a closed port each read the socket tables; none may hold the
 * daemon's loop. Each holder process keeps CONNECTIONS loopback connections to itself (both ends:
 * two table rows each, under its open-file limit); HOTLINE_TEST_SOCKET_HOLDERS sets how many run
 * (the default, 2, makes ~36,000 rows; the 42,000 were measured by hand, see the README).
 */
const HOLDERS = Number(process.env.HOTLINE_TEST_SOCKET_HOLDERS) || 2;
const CONNECTIONS = 9000;

const HOLDER = `
const net = require("net");
const n = Number(process.argv[1]);
const sockets = [];
const server = net.createServer((s) => sockets.push(s)).listen(0, "127.0.0.1", async () => {
  const port = server.address().port;
  for (let i = 0; i < n; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, n - i) }, () => new Promise((resolve, reject) => {
      const c = net.connect(port, "127.0.0.1", () => resolve());
      c.on("error", reject);
      sockets.push(c);
    })));
  }
  process.stdout.write("ready " + port + "\\n");
});
setInterval(() => {}, 1e6);
`;

/** Starts a process holding `n` loopback connections (2n sockets); resolves with its listening port once all are open. */
async function holder(n: number): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, ["-e", HOLDER, String(n)], { stdio: ["ignore", "pipe", "inherit"] });
  onTestFinished(() => void proc.kill("SIGKILL"));
  let out = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  while (!/ready \d+/.test(out)) {
    const [code] = await Promise.race([once(proc, "exit"), once(proc.stdout!, "data").then(() => [undefined])]);
    if (code !== undefined) throw new Error(`the socket holder exited (${code}): ${out}`);
  }
  return { proc, port: Number(/ready (\d+)/.exec(out)![1]) };
}

describe("ports.list, ports.wait and previews with tens of thousands of sockets open", () => {
  const t = useDaemon();

  it("answer right, and no call (nor their polls) holds the daemon's loop", async () => {
    const holders = await Promise.all(Array.from({ length: HOLDERS }, () => holder(CONNECTIONS)));
    const stallsBefore = t.daemon.stalls.length;
    const closed = await freePort();
    const later = await freePort();
    const link = await t.client.ok("preview.open", { port: closed });
    const token = new URL(link.url).searchParams.get("hotline_preview_token")!;
    // ports.wait polls while a server starts (a second later); meanwhile lists, and preview requests to a closed port.
    const waiting = t.client.ok("ports.wait", { port: later, timeoutMs: 120_000 }, 150_000);
    const listener = `setTimeout(() => require("net").createServer().listen(${later}, "127.0.0.1"), 1000)`;
    const { job } = await t.client.ok("shell", { command: ["node", "-e", listener] });
    onTestFinished(() => void t.client.call("jobs.cancel", { job: job.id }).catch(() => {}));
    const lists = await Promise.all(Array.from({ length: 4 }, () => t.client.ok("ports.list", {}, 120_000)));
    for (const { ports } of lists)
      for (const h of holders)
        expect(ports).toContainEqual(expect.objectContaining({ port: h.port, address: "127.0.0.1", pid: h.proc.pid }));
    const pages = await Promise.all(
      Array.from({ length: 8 }, () => previewRequest(t.daemon.url, closed, { headers: { "X-Hotline-Preview-Token": token } })),
    );
    for (const page of pages) expect(JSON.parse(page.body).error.details.reason).toBe("not_listening");
    expect(await waiting).toMatchObject({ listening: true, listeners: [expect.objectContaining({ port: later, job: job.id })] });
    // The watchdog's own figure: no turn the daemon spent (on a CPU or blocked, not waiting for one) reached 100 ms.
    expect(t.daemon.stalls.slice(stallsBefore).map(describeStall)).toEqual([]);
  }, 300_000);
});

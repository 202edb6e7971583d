import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { spawn as spawnPty, type IPty } from "node-pty";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { type Frame, useDaemon } from "../helpers/daemon.js";
import { pasted, SshClients } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);

/** The OpenSSH client in a terminal of its own (node-pty), as a person's terminal emulator runs it. */
class TerminalClient {
  output = "";
  readonly exited: Promise<number>;
  constructor(readonly pty: IPty) {
    pty.onData((d) => (this.output += d));
    this.exited = new Promise((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
  }

  async waitFor(text: string | RegExp, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const seen = (): boolean => (typeof text === "string" ? this.output.includes(text) : text.test(this.output));
    while (!seen()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${text}; the terminal shows:\n${this.output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describe.skipIf(!haveSsh)("SSH: terminals (ssh -t) with the real OpenSSH client", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  const terminals: TerminalClient[] = [];
  afterEach(() => {
    for (const t of terminals.splice(0)) {
      try {
        process.kill(-t.pty.pid, "SIGKILL");
      } catch {}
    }
    clients.killAll();
  });
  afterAll(() => clients.cleanup());

  const inTerminal = (command: string, cols: number, rows: number): TerminalClient => {
    const pty = spawnPty("bash", ["-c", command], {
      cols,
      rows,
      env: { ...process.env, HOME: clients.home, TERM: "xterm" } as Record<string, string>,
    });
    const t = new TerminalClient(pty);
    terminals.push(t);
    return t;
  };

  it("`ssh -tt … 'stty size'` in a 40×120 terminal prints 40 120", async () => {
    const access = await clients.open(ctx.client);
    const t = inTerminal(pasted(access, [...clients.options(access), "-tt"], "stty size"), 120, 40);
    expect(await t.exited).toBe(0);
    expect(t.output).toContain("40 120");
  });

  it("an interactive shell (-tt) is a running terminal job whose output is kept; resizes reach it; exit ends it", async () => {
    const access = await clients.open(ctx.client);
    const t = inTerminal(pasted(access, [...clients.options(access), "-tt"]), 100, 30);
    t.pty.write("echo marker-$((6*7)); stty size\r");
    await t.waitFor("marker-42");
    await t.waitFor("30 100");
    const jobs = (await ctx.client.ok("jobs.list", { kind: "terminal", state: "running" })).jobs as Frame[];
    const job = jobs.find((j) => String(j.title).startsWith("ssh: "));
    expect(job, JSON.stringify(jobs)).toBeDefined();
    const kept = await ctx.client.ok("jobs.output", { job: job!.id });
    expect(Buffer.from(kept.data, kept.encoding === "base64" ? "base64" : "utf8").toString()).toContain("marker-42");
    t.pty.resize(90, 20);
    t.pty.write("stty size\r");
    await t.waitFor("20 90");
    t.pty.write("exit 3\r");
    expect(await t.exited).toBe(3);
    const ended = await ctx.client.ok("jobs.wait", { job: job!.id, timeoutMs: 30_000 });
    expect(ended.job).toMatchObject({ state: "failed", exitCode: 3 });
  });

  // Issue 33, item 15: a 0×0 window-change threw in the pty's resize and ended the whole connection.
  it("a terminal resized to 0×0 (OpenSSH sends it as is) is ignored: the session goes on at its size", async () => {
    const access = await clients.open(ctx.client);
    const t = inTerminal(pasted(access, [...clients.options(access), "-tt"]), 100, 30);
    t.pty.write("echo ready-$((2*3))\r");
    await t.waitFor("ready-6");
    // node-pty refuses a 0×0 resize itself: set it on the terminal device, whose kernel sends ssh SIGWINCH.
    const pts = readlinkSync(`/proc/${t.pty.pid}/fd/0`);
    execFileSync("stty", ["-F", pts, "rows", "0", "cols", "0"]);
    t.pty.write("echo after-$((5*5)); stty size\r");
    await t.waitFor("after-25");
    await t.waitFor("30 100");
    expect(ctx.daemon.logLines.some((l) => l.includes("ssh: window-change ignored"))).toBe(true);
    t.pty.write("exit 4\r");
    expect(await t.exited).toBe(4);
  });
});

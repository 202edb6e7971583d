import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { freePort } from "./helpers.js";

/** A job that listens on `port` at `host` after `delayMs`, then blocks until cancelled. */
function listenerScript(port: number, host: string, delayMs = 0): string {
  return `setTimeout(() => require("net").createServer(() => {}).listen(${port}, ${JSON.stringify(host)}), ${delayMs}); setInterval(() => {}, 1e6);`;
}

describe("ports.list and ports.wait", () => {
  const t = useDaemon();

  it("lists a job's listening port with its pid, command and job; the daemon's own port is left out", async () => {
    const port = await freePort();
    const { job } = await t.client.ok("shell", { command: ["node", "-e", listenerScript(port, "127.0.0.1")] });
    try {
      const waited = await t.client.ok("ports.wait", { port, timeoutMs: 30_000 });
      expect(waited.listening).toBe(true);
      const { ports } = await t.client.ok("ports.list");
      const mine = ports.find((p: { port: number }) => p.port === port);
      expect(mine).toMatchObject({ port, address: "127.0.0.1", family: "ipv4", job: job.id });
      expect(mine.command).toContain("node -e");
      expect(mine.pid).toBeGreaterThan(1);
      const daemonPort = Number(new URL(t.daemon.url).port);
      expect(ports.some((p: { port: number }) => p.port === daemonPort)).toBe(false);
    } finally {
      await t.client.ok("jobs.cancel", { job: job.id });
    }
  });

  it("a child that left the job's process group is still credited to the job; IPv6 addresses read right", async () => {
    const port = await freePort();
    const inner = listenerScript(port, "::1");
    const { job } = await t.client.ok("shell", { command: `setsid node -e '${inner}' & wait` });
    try {
      const waited = await t.client.ok("ports.wait", { port, timeoutMs: 30_000 });
      expect(waited.listeners).toEqual([expect.objectContaining({ port, address: "::1", family: "ipv6", job: job.id })]);
    } finally {
      await t.client.ok("jobs.cancel", { job: job.id });
    }
  });

  it("ports.wait answers when a server starts listening after the call, and listening: false at the timeout", async () => {
    const port = await freePort();
    const idle = await t.client.ok("ports.wait", { port, timeoutMs: 300 });
    expect(idle).toEqual({ listening: false, listeners: [] });
    const { job } = await t.client.ok("shell", { command: ["node", "-e", listenerScript(port, "0.0.0.0", 1500)] });
    try {
      const before = await t.client.ok("ports.wait", { port, timeoutMs: 0 });
      expect(before.listening).toBe(false);
      const waited = await t.client.ok("ports.wait", { port, timeoutMs: 30_000 });
      expect(waited.listening).toBe(true);
      expect(waited.listeners[0]).toMatchObject({ port, address: "0.0.0.0", job: job.id });
    } finally {
      await t.client.ok("jobs.cancel", { job: job.id });
    }
  });
});

import { spawn } from "node:child_process";
import { describe, expect, it, onTestFinished } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { freePort, previewRequest } from "./helpers.js";

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

  it("a process of another daemon's job is marked foreignJob, never named by that daemon's job id", async () => {
    const port = await freePort();
    // A listener carrying another hotline's job marker (its jobs' processes inherit AGENT_JOB_ID as ours do).
    const foreign = spawn(process.execPath, ["-e", listenerScript(port, "127.0.0.1")], {
      env: { ...process.env, AGENT_JOB_ID: "j0000000000000other" },
      stdio: "ignore",
    });
    onTestFinished(() => void foreign.kill("SIGKILL"));
    const waited = await t.client.ok("ports.wait", { port, timeoutMs: 30_000 });
    expect(waited.listeners).toEqual([
      { port, address: "127.0.0.1", family: "ipv4", pid: foreign.pid, command: expect.any(String), foreignJob: true },
    ]);
    const { ports } = await t.client.ok("ports.list");
    const listed = ports.find((p: { port: number }) => p.port === port);
    expect(listed).toMatchObject({ pid: foreign.pid, foreignJob: true });
    expect(listed.job).toBeUndefined();
  });

  it("preview.open with waitMs waits for a server that starts after the call and answers the link in one call", async () => {
    const port = await freePort();
    const server = `setTimeout(() => require("http").createServer((q, s) => s.end("up")).listen(${port}, "127.0.0.1"), 1500); setInterval(() => {}, 1e6);`;
    const { job } = await t.client.ok("shell", { command: ["node", "-e", server] });
    try {
      const link = await t.client.ok("preview.open", { port, waitMs: 60_000 }, 90_000);
      expect(link).toMatchObject({ available: true, port, listening: true });
      const token = new URL(link.url).searchParams.get("hotline_preview_token")!;
      expect(await previewRequest(t.daemon.url, port, { headers: { "X-Hotline-Preview-Token": token } })).toMatchObject({
        status: 200,
        body: "up",
      });
    } finally {
      await t.client.ok("jobs.cancel", { job: job.id });
    }
    // Nothing listening within waitMs: the link all the same, listening: false.
    const idle = await freePort();
    expect(await t.client.ok("preview.open", { port: idle, waitMs: 300 })).toMatchObject({ available: true, port: idle, listening: false });
  });
});

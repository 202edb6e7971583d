import { describe, expect, it } from "vitest";
import { pidAlive } from "../../daemon/process/index.js";
import { TestDaemon } from "../helpers/daemon.js";

describe("sessions across a daemon restart", () => {
  it("reports a session lost after a stop, with its last cwd, and resumes it as a new shell there, naming what is gone", async () => {
    const first = await TestDaemon.start();
    let client = await first.client();
    const { session } = await client.ok("session.open", { cwd: "/" });
    await client.ok("session.run", { session: session.id, command: "cd /tmp && export X=1", wait: 30_000 });
    const running = await client.ok("session.run", { session: session.id, command: "echo before; sleep 100" });
    await client.ok("jobs.follow", { job: running.job.id });
    await client.waitFor((f) => f.event === "job.output" && f.job === running.job.id);
    const shell = (await client.ok("session.status", { session: session.id })).session;
    await client.close();
    expect(await first.stop()).toBe(0);
    expect(pidAlive(shell.pid)).toBe(false);

    const second = await TestDaemon.start({ dirs: first.dirs });
    try {
      client = await second.client();
      const lost = (await client.ok("session.status", { session: session.id })).session;
      expect(lost).toMatchObject({ id: session.id, state: "lost", cwd: "/tmp", ended: { reason: "the daemon stopped while it was open" } });
      expect((await client.ok("session.list")).sessions.map((s: { id: string }) => s.id)).toContain(session.id);
      // Its jobs are kept, lost, with their output.
      expect((await client.ok("jobs.status", { job: running.job.id })).state).toBe("lost");
      expect((await client.ok("jobs.output", { job: running.job.id })).data).toBe("before\n");
      expect((await client.ok("jobs.status", { job: shell.shellJob })).state).toBe("lost");
      const refused = await client.call("session.run", { session: session.id, command: "true" });
      expect(refused.error).toMatchObject({ code: "conflict", details: { state: "lost" } });
      expect(refused.error.message).toContain(`"resume": "${session.id}"`);

      const resumed = await client.ok("session.open", { resume: session.id });
      expect(resumed.session).toMatchObject({ id: session.id, state: "idle", cwd: "/tmp", generation: 1 });
      expect(resumed.resumed.cwd).toBe("/tmp");
      expect(resumed.resumed.lost).toEqual(expect.arrayContaining([expect.stringContaining("variables")]));
      const after = await client.ok("session.run", { session: session.id, command: 'pwd; echo "[${X-}]"', wait: 30_000 });
      expect(after.output.data).toBe("/tmp\n[]\n");
      expect((await client.call("session.open", { resume: session.id })).error).toMatchObject({ code: "conflict", path: "/resume" });
      await client.close();
    } finally {
      await second.stop();
      second.cleanup();
    }
  });

  it("after a crash, the next daemon stops the shell the crashed one left and reports the session lost", async () => {
    const first = await TestDaemon.start();
    const client = await first.client();
    const { session } = await client.ok("session.open", { cwd: "/tmp" });
    const status = (await client.ok("session.status", { session: session.id })).session;
    await client.close();
    await first.kill();
    expect(pidAlive(status.pid)).toBe(true); // the crash left it behind

    const second = await TestDaemon.start({ dirs: first.dirs });
    try {
      const next = await second.client();
      for (let i = 0; i < 100 && pidAlive(status.pid); i++) await new Promise((r) => setTimeout(r, 50));
      expect(pidAlive(status.pid)).toBe(false);
      expect((await next.ok("session.status", { session: session.id })).session).toMatchObject({ state: "lost", cwd: "/tmp" });
      await next.close();
    } finally {
      await second.stop();
      second.cleanup();
    }
  });
});

describe("session budgets", () => {
  it("refuses sessions past the budget with limit_exceeded, however many are asked for, and frees room on close", async () => {
    const daemon = await TestDaemon.start();
    const client = await daemon.client();
    try {
      const opened: string[] = [];
      let refusal: Record<string, any> | undefined;
      // 1000 asked for, in waves: the daemon opens up to its budget and refuses the rest at once.
      for (let wave = 0; wave < 10 && !refusal; wave++) {
        const replies = await Promise.all(Array.from({ length: 100 }, () => client.call("session.open", { cwd: "/tmp" }, 60_000)));
        for (const reply of replies) {
          if (reply.ok) opened.push(reply.result.session.id);
          else refusal ??= reply.error;
        }
      }
      expect(opened.length).toBe(32);
      expect(refusal).toMatchObject({ code: "limit_exceeded", details: { limit: 32, open: 32 } });
      expect(refusal!.message).toMatch(/^at most 32 shell sessions may be open at once and 32 are; close one \(session.close\)/);
      await client.ok("session.close", { session: opened[0] });
      const again = await client.ok("session.open", { cwd: "/tmp" });
      expect(again.session.state).toBe("idle");
      await Promise.all([...opened.slice(1), again.session.id].map((id) => client.ok("session.close", { session: id })));
    } finally {
      await client.close();
      await daemon.stop();
      daemon.cleanup();
    }
  });

  it("keeps a command that prints without end to its output cap, cancels it, and the session goes on", async () => {
    const daemon = await TestDaemon.start({ args: ["--output-cap", String(4 * 1024 * 1024)] });
    const client = await daemon.client();
    try {
      const { session } = await client.ok("session.open", { cwd: "/tmp" });
      const { job } = await client.ok("session.run", { session: session.id, command: "yes flood" });
      for (let i = 0; i < 200; i++) {
        const status = await client.ok("jobs.status", { job: job.id });
        if ((status.omittedBytes ?? 0) > 8 * 1024 * 1024) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await client.ok("jobs.cancel", { job: job.id, graceMs: 2000 });
      const ended = (await client.ok("jobs.wait", { job: job.id, timeoutMs: 30_000 })).job;
      expect(ended.state).toBe("cancelled");
      // What is kept is bounded by the cap; the rest is counted, not stored.
      expect(ended.omittedBytes).toBeGreaterThan(0);
      expect(ended.outputBytes - ended.omittedBytes).toBeLessThanOrEqual(4 * 1024 * 1024 + 64 * 1024);
      const next = await client.ok("session.run", { session: session.id, command: "echo calm", wait: 30_000 });
      expect(next.output.data).toBe("calm\n");
    } finally {
      await client.close();
      await daemon.stop();
      daemon.cleanup();
    }
  });
});

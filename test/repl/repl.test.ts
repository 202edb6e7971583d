import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { ChildBudget } from "../../daemon/repl/index.js";
import { pidAlive } from "../../daemon/process/index.js";
import { ended, fixtureRepl, jobManager, outputOf, run } from "./harness.js";

describe("a long-lived child driven one request at a time", () => {
  it("runs each request as a job whose log holds that request's output only", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    expect(repl.state).toBe("idle");
    const first = await ended(jobs, run(repl, "echo:one"));
    const second = await ended(jobs, run(repl, "err:two"));
    expect(first.status()).toMatchObject({ state: "succeeded", exitCode: 0, kind: "fixture-run", title: "echo:one" });
    expect(outputOf(first).toString()).toBe("one");
    expect(outputOf(second, "stderr").toString()).toBe("two");
    expect(outputOf(second, "stdout").length).toBe(0);
    // The child lives in a host job of its own, listed like any job.
    expect(repl.hostJob!.status()).toMatchObject({ kind: "fixture-host", state: "running", pid: repl.child!.pid });
  });

  it("keeps every byte written before the end message in its own request, run after run", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    // The done message travels on fd 4 and often arrives in the same poll phase as, or before, the
    // last stdout bytes; a sizes from a few bytes to several socket buffers.
    for (const size of [1, 100, 4096, 65_536, 200_000, 1_000_000, 3_000_000]) {
      for (let i = 0; i < 3; i++) {
        const job = await ended(jobs, run(repl, `burst:${size}`));
        expect(outputOf(job).length, `burst:${size}`).toBe(size);
      }
    }
    expect(repl.generation).toBe(1);
  });

  it("refuses a second request while one runs, naming the running job; the same key gets the same job", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    const slow = run(repl, "sleep:300", { key: "k1" });
    expect(() => run(repl, "echo:x")).toThrow(expect.objectContaining({ code: "conflict", details: { job: slow.id } }));
    expect(run(repl, "sleep:300", { key: "k1" })).toBe(slow);
    await ended(jobs, slow);
    expect(repl.state).toBe("idle");
    expect(outputOf(await ended(jobs, run(repl, "echo:after"))).toString()).toBe("after");
  });

  it("passes jobs.input to the child's stdin", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    const job = run(repl, "read");
    expect(await job.control.input!(Buffer.from("hello\n"), false, 5000)).toBe(6);
    await ended(jobs, job);
    expect(outputOf(job).toString()).toBe("read:hello\n");
  });

  it("interrupts a request on cancel and keeps the child and its state", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    await ended(jobs, run(repl, "set:x=41"));
    const job = run(repl, "nap:600000");
    // Once the child has begun the run: a SIGINT that reaches this fixture while it is idle is ignored.
    await expect.poll(() => job.status().outputBytes, { timeout: 20_000 }).toBeGreaterThan(0);
    jobs.cancel(job.id, "SIGTERM", 20_000);
    await ended(jobs, job);
    expect(job.status()).toMatchObject({ state: "cancelled", exitCode: 1 });
    expect(repl.generation).toBe(1);
    expect(outputOf(await ended(jobs, run(repl, "get:x"))).toString()).toBe("41");
  });

  it("restarts the child when a request ignores the interrupt, and says the state is lost", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs, { restartAfterKillMs: 100 });
    await repl.start();
    await ended(jobs, run(repl, "set:x=41"));
    const firstHost = repl.hostJob!;
    const firstPid = repl.child!.pid!;
    const job = run(repl, "hang-ignoring-sigint");
    jobs.cancel(job.id, "SIGTERM", 300);
    await ended(jobs, job);
    expect(job.status()).toMatchObject({ state: "cancelled" });
    expect(job.status().error?.message).toMatch(/restarted \(generation 2\) and its state is lost/);
    await ended(jobs, firstHost);
    expect(firstHost.status()).toMatchObject({ state: "failed", signal: "SIGKILL" });
    expect(pidAlive(firstPid)).toBe(false);
    const next = await ended(jobs, run(repl, "get:x"));
    expect(repl.generation).toBe(2);
    expect(outputOf(next).toString()).toBe("undefined");
    expect(repl.hostJob!.record.title).toBe("fixture (generation 2)");
  });

  it("times a request out like a cancel: the job ends timed_out", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    const job = await ended(jobs, run(repl, "sleep:600000", { timeoutMs: 100 }));
    expect(job.status()).toMatchObject({ state: "timed_out" });
    expect(repl.state).toBe("idle");
  });

  it("ends the repl when the child exits by itself; the request reports the exit code", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    const host = repl.hostJob!;
    const job = await ended(jobs, run(repl, "exit:3"));
    expect(job.status()).toMatchObject({ state: "failed", exitCode: 3 });
    expect(repl.state).toBe("exited");
    expect(repl.ended).toMatchObject({ exitCode: 3 });
    expect(() => run(repl, "echo:x")).toThrow(expect.objectContaining({ code: "conflict" }));
    await ended(jobs, host);
    expect(host.status()).toMatchObject({ state: "failed", exitCode: 3 });
  });

  it("closes after its idle timeout and frees its place in the budget", async () => {
    const jobs = jobManager();
    const budget = new ChildBudget({ what: "fixtures", maxChildren: 1, advice: "close one" });
    const repl = fixtureRepl(jobs, { budget, idleTimeoutMs: 50 });
    await repl.start();
    await once(repl, "ended");
    expect(repl.state).toBe("closed");
    expect(repl.ended!.reason).toBe("idle for 50 ms");
    expect(budget.count).toBe(0);
    await ended(jobs, repl.hostJob!);
    expect(repl.hostJob!.status()).toMatchObject({ state: "succeeded", result: { ended: "idle for 50 ms" } });
  });

  it("refuses a start past the budget with limit_exceeded, before spawning anything", async () => {
    const jobs = jobManager();
    const budget = new ChildBudget({ what: "fixtures", maxChildren: 2, advice: "close one" });
    const a = fixtureRepl(jobs, { budget });
    const b = fixtureRepl(jobs, { budget });
    await Promise.all([a.start(), b.start()]);
    const c = fixtureRepl(jobs, { budget });
    await expect(c.start()).rejects.toMatchObject({ code: "limit_exceeded", details: { limit: 2, open: 2 } });
    expect(c.hostJob).toBeUndefined();
    await a.close("make room");
    await c.start();
    expect(budget.count).toBe(2);
  });

  it("ends a child that breaks its protocol", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    const job = await ended(jobs, run(repl, "bad"));
    expect(job.status().state).toBe("failed");
    expect(repl.state).toBe("exited");
    expect(repl.ended!.reason).toMatch(/protocol error: the child sent a line that is not JSON/);
  });

  it("fails a start that never gets ready, quoting what the child wrote", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs, {
      readyTimeoutMs: 20_000,
      driver: {
        spawn: () => ({ argv: ["bash", "-c", "echo no python here >&2; exit 7"], cwd: "/", env: {}, stdin: "ignore" }),
        decoder: () => ({ push: () => {} }),
        isReady: () => true,
        stopper: { interrupt: () => {}, terminate: () => {} },
      },
    });
    await expect(repl.start()).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringMatching(/did not start: it ended \(exit code 7\) before it was ready; it wrote: "no python here\\n"/),
    });
    expect(repl.state).toBe("closed");
  });

  it("on the daemon's shutdown, its request and host jobs end lost and the child is gone", async () => {
    const jobs = jobManager();
    const repl = fixtureRepl(jobs);
    await repl.start();
    const pid = repl.child!.pid!;
    const host = repl.hostJob!;
    const job = run(repl, "sleep:600000");
    await jobs.shutdown(500);
    expect(job.status().state).toBe("lost");
    expect(host.status().state).toBe("lost");
    expect(pidAlive(pid)).toBe(false);
    expect(repl.state).toBe("closed");
  });
});

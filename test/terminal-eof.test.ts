import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useDaemon, type TestClient } from "./helpers/daemon.js";

// Debian's interpreter when present: a version manager's shim on PATH only adds start-up time.
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const TERMINAL = { cols: 80, rows: 24 };

/** Starts python's REPL in a terminal and at once sends a line with eof, as an agent does. */
async function pythonWithEof(client: TestClient): Promise<{ state: string; output: string; written: number }> {
  const started = await client.ok("shell", { command: `${PYTHON} -q`, pty: TERMINAL });
  const id = started.job.id as string;
  const input = await client.ok("jobs.input", { job: id, data: "2**100\n", eof: true });
  const { job } = await client.ok("jobs.wait", { job: id, timeoutMs: 20_000 }, 30_000);
  if (job.state === "running") await client.ok("jobs.cancel", { job: id, signal: "SIGKILL", wait: 5000 });
  const output = await client.ok("jobs.output", { job: id, from: 0 });
  return { state: job.state, output: output.data, written: input.written };
}

describe("eof on a terminal", () => {
  const t = useDaemon();

  it("sends Ctrl-D after the data every time, even when the program had not started reading (100 of 100)", async () => {
    const results: Array<{ state: string; output: string; written: number }> = [];
    for (let batch = 0; batch < 10; batch++) {
      results.push(...(await Promise.all(Array.from({ length: 10 }, () => pythonWithEof(t.client)))));
    }
    const failed = results.filter((r) => r.state !== "succeeded" || !r.output.includes("1267650600228229401496703205376"));
    expect(failed, JSON.stringify(failed.slice(0, 3))).toEqual([]);
    expect(results.every((r) => r.written === 7)).toBe(true);
  }, 240_000);

  it("never closes a terminal's input: input after an eof is taken, eof included", async () => {
    const started = await t.client.ok("shell", { command: "cat; echo first-cat-done; cat; echo second-cat-done", pty: TERMINAL });
    const id = started.job.id as string;
    expect((await t.client.ok("jobs.input", { job: id, data: "one\n", eof: true })).written).toBe(4);
    expect((await t.client.ok("jobs.input", { job: id, data: "two\n" })).written).toBe(4);
    expect((await t.client.ok("jobs.input", { job: id, eof: true })).written).toBe(0);
    const { job } = await t.client.ok("jobs.wait", { job: id, timeoutMs: 20_000 }, 30_000);
    expect(job.state).toBe("succeeded");
    const { data } = await t.client.ok("jobs.output", { job: id, from: 0 });
    expect(data).toMatch(/one[\s\S]*first-cat-done[\s\S]*two[\s\S]*second-cat-done/);
  });

  it("shell with pty and a stdin string: the data is typed, then Ctrl-D once the program reads (python's REPL exits)", async () => {
    const reply = await t.client.ok("shell", { command: `${PYTHON} -q`, pty: TERMINAL, stdin: "print(6 * 7)\n", wait: 30_000 }, 40_000);
    if (reply.job.state === "running") await t.client.ok("jobs.cancel", { job: reply.job.id, signal: "SIGKILL", wait: 5000 });
    expect(reply.job.state).toBe("succeeded");
    expect(reply.output.data).toMatch(/42\r\n/);
  });

  it("shell with pty and a stdin string: cat gets the lines, then end of file", async () => {
    const reply = await t.client.ok("shell", { command: "cat; echo cat-ended", pty: TERMINAL, stdin: "one\ntwo\n", wait: 30_000 }, 40_000);
    if (reply.job.state === "running") await t.client.ok("jobs.cancel", { job: reply.job.id, signal: "SIGKILL", wait: 5000 });
    expect(reply.job.state).toBe("succeeded");
    expect(reply.output.data).toMatch(/one[\s\S]*two[\s\S]*cat-ended/);
  });

  it("a terminal with a stdin string stays a terminal: jobs.input still types into it after the Ctrl-D", async () => {
    const started = await t.client.ok("shell", { command: "cat; echo first-done; cat; echo second-done", pty: TERMINAL, stdin: "a\n" });
    const id = started.job.id as string;
    expect((await t.client.ok("jobs.input", { job: id, data: "b\n", eof: true })).written).toBe(2);
    const { job } = await t.client.ok("jobs.wait", { job: id, timeoutMs: 20_000 }, 30_000);
    expect(job.state).toBe("succeeded");
    const { data } = await t.client.ok("jobs.output", { job: id, from: 0 });
    expect(data).toMatch(/a[\s\S]*first-done[\s\S]*b[\s\S]*second-done/);
  });
});

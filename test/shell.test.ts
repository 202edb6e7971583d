import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { useDaemon } from "./helpers/daemon.js";
import { groupMembers } from "./helpers/process-group.js";

describe("shell and terminal jobs", () => {
  const t = useDaemon();

  it("answers a short command in one round trip with wait", async () => {
    const result = await t.client.ok("shell", { command: "echo out; echo err >&2; exit 3", wait: 10_000 });
    expect(result.job).toMatchObject({ state: "failed", exitCode: 3, kind: "shell" });
    expect(result.output.data).toContain("out\n");
    expect(result.output.data).toContain("err\n");
    expect(result.output.bytes).toBe(8);
    const stdout = await t.client.ok("jobs.output", { job: result.job.id, stream: "stdout" });
    expect(stdout.data).toBe("out\n");
    const stderr = await t.client.ok("jobs.output", { job: result.job.id, stream: "stderr" });
    expect(stderr.data).toBe("err\n");
  });

  it("runs an array without a shell", async () => {
    const result = await t.client.ok("shell", { command: ["printf", "%s|", "a b", "$HOME"], wait: 10_000 });
    expect(result.output.data).toBe("a b|$HOME|");
    expect(result.job.state).toBe("succeeded");
  });

  it("reports a missing program as a failed job with not_found", async () => {
    const result = await t.client.ok("shell", { command: ["/no/such/program"], wait: 10_000 });
    expect(result.job.state).toBe("failed");
    expect(result.job.error.code).toBe("not_found");
  });

  it("refuses a cwd that does not exist", async () => {
    const reply = await t.client.call("shell", { command: "true", cwd: "/no/such/dir" });
    expect(reply.error).toMatchObject({ code: "invalid_request", path: "/cwd" });
  });

  it("gives a job no token and no daemon variables, and lets the job's env win", async () => {
    const result = await t.client.ok("shell", { command: "env", env: { HOME: "/custom/home", EXTRA: "1" }, wait: 10_000 });
    const env = result.output.data as string;
    expect(env).not.toContain(t.daemon.token);
    expect(env).not.toMatch(/^HOTLINE_/m);
    expect(env).toMatch(/^HOME=\/custom\/home$/m);
    expect(env).toMatch(/^EXTRA=1$/m);
  });

  it("delivers stdin given up front, and streamed stdin with eof", async () => {
    const upfront = await t.client.ok("shell", { command: "tr a-z A-Z", stdin: "hello", wait: 10_000 });
    expect(upfront.output.data).toBe("HELLO");
    const { job } = await t.client.ok("shell", { command: "cat; echo done", stdin: true });
    expect((await t.client.ok("jobs.input", { job: job.id, data: "one\n" })).written).toBe(4);
    await t.client.ok("jobs.input", { job: job.id, data: "dHdvCg==", encoding: "base64", eof: true });
    const { job: final } = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    expect(final.state).toBe("succeeded");
    expect((await t.client.ok("jobs.output", { job: job.id })).data).toBe("one\ntwo\ndone\n");
  });

  it("closes stdin at once when no stdin is asked for, so nothing hangs", async () => {
    const result = await t.client.ok("shell", { command: "cat; echo after", wait: 10_000 });
    expect(result.output.data).toBe("after\n");
  });

  it("cancel leaves no process of the group alive, grandchildren included", async () => {
    const { job } = await t.client.ok("shell", { command: "sleep 1000 & sleep 1000 & echo started; wait" });
    await t.client.ok("jobs.follow", { job: job.id });
    await t.client.waitFor((f) => f.event === "job.output" && f.job === job.id);
    const pids = execFileSync("pgrep", ["-f", "sleep 1000"], { encoding: "utf8" }).trim().split("\n").map(Number);
    const pgid = Number(execFileSync("ps", ["-o", "pgid=", "-p", String(pids[0])], { encoding: "utf8" }).trim());
    expect(groupMembers(pgid).length).toBeGreaterThanOrEqual(3);
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 500 });
    const exit = await t.client.waitForExit(job.id);
    expect(exit.status.state).toBe("cancelled");
    expect(groupMembers(pgid)).toEqual([]);
  });

  it("escalates to SIGKILL for a job that ignores SIGTERM", async () => {
    const { job } = await t.client.ok("shell", { command: "trap '' TERM; echo ready; while true; do sleep 0.05; done" });
    await t.client.ok("jobs.follow", { job: job.id });
    await t.client.waitFor((f) => f.event === "job.output" && f.job === job.id);
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 200 });
    const exit = await t.client.waitForExit(job.id);
    expect(exit.status.state).toBe("cancelled");
    expect(exit.status.signal).toBe("SIGKILL");
  });

  it("times out with state timed_out and keeps the partial output", async () => {
    const result = await t.client.ok("shell", { command: "echo partial; sleep 30", timeoutMs: 300, wait: 20_000 });
    expect(result.job.state).toBe("timed_out");
    expect(result.output.data).toBe("partial\n");
  });

  it("wait returns the running status at its timeout and the job keeps running", async () => {
    const { job } = await t.client.ok("shell", { command: "sleep 0.5; echo finished" });
    const early = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10 });
    expect(early.timedOut).toBe(true);
    expect(early.job.state).toBe("running");
    const late = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    expect(late.job.state).toBe("succeeded");
  });

  it("a closing socket neither kills nor pauses a job", async () => {
    const other = await t.daemon.client();
    const { job } = await other.ok("shell", { command: "sleep 0.3; echo survived" });
    await other.close();
    const { job: final } = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    expect(final.state).toBe("succeeded");
    expect((await t.client.ok("jobs.output", { job: job.id })).data).toBe("survived\n");
  });

  it("is idempotent by key: same parameters give the same job, others a conflict", async () => {
    const first = await t.client.ok("shell", { command: "echo once", key: "build-1", wait: 10_000 });
    const again = await t.client.ok("shell", { command: "echo once", key: "build-1" });
    expect(again.job.id).toBe(first.job.id);
    const other = await t.client.call("shell", { command: "echo twice", key: "build-1" });
    expect(other.error).toMatchObject({ code: "conflict", path: "/key" });
    const list = await t.client.ok("jobs.list", { limit: 100 });
    expect(list.jobs.filter((j: { title: string }) => j.title === "echo once")).toHaveLength(1);
  });

  it("runs a terminal whose size follows jobs.resize", async () => {
    const { job } = await t.client.ok("shell", { command: "stty size; read line; stty size", pty: { cols: 80, rows: 24 } });
    await t.client.ok("jobs.follow", { job: job.id });
    await t.client.waitFor(() => t.client.outputOf(job.id).toString().includes("24 80"));
    await t.client.ok("jobs.resize", { job: job.id, cols: 120, rows: 40 });
    await t.client.ok("jobs.input", { job: job.id, data: "go\r" });
    const exit = await t.client.waitForExit(job.id);
    expect(exit.status.state).toBe("succeeded");
    expect(t.client.outputOf(job.id, "pty").toString()).toContain("40 120");
  });

  it("replays terminal scrollback to a viewer that attaches late, and serves several viewers", async () => {
    const { job } = await t.client.ok("shell", { command: "echo early-line; read x; echo late-line", pty: { cols: 80, rows: 24 } });
    const early = await t.daemon.client();
    await early.ok("jobs.follow", { job: job.id });
    await early.waitFor(() => early.outputOf(job.id).toString().includes("early-line"));
    const late = await t.daemon.client();
    const followed = await late.ok("jobs.follow", { job: job.id });
    expect(followed.from).toBe(0);
    await late.waitFor(() => late.outputOf(job.id).toString().includes("early-line"));
    await t.client.ok("jobs.input", { job: job.id, data: "\r" });
    await early.waitForExit(job.id);
    await late.waitForExit(job.id);
    expect(early.outputOf(job.id).toString()).toContain("late-line");
    expect(late.outputOf(job.id).toString()).toContain("late-line");
    await early.close();
    await late.close();
  });

  it("keeps bytes that are not UTF-8 exact, as base64", async () => {
    const result = await t.client.ok("shell", { command: "printf '\\xff\\xfeok'", wait: 10_000 });
    expect(result.output.encoding).toBe("base64");
    expect(Buffer.from(result.output.data, "base64")).toEqual(Buffer.from([0xff, 0xfe, 0x6f, 0x6b]));
  });

  it("lists jobs newest first with filters", async () => {
    await t.client.ok("shell", { command: "true", wait: 10_000 });
    const list = await t.client.ok("jobs.list", { state: "succeeded", kind: "shell", limit: 2 });
    expect(list.jobs).toHaveLength(2);
    expect(list.jobs[0].id > list.jobs[1].id).toBe(true);
    expect(list.jobs.every((j: { state: string }) => j.state === "succeeded")).toBe(true);
    expect(list.more).toBe(true);
  });
});

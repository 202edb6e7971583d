import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pidAlive } from "../../daemon/process/index.js";
import { type TestClient, useDaemon } from "../helpers/daemon.js";

const WAIT = 30_000;
const scratch = mkdtempSync(join(tmpdir(), "hotline-sessions-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function open(client: TestClient, params: Record<string, unknown> = {}): Promise<string> {
  const { session } = await client.ok("session.open", { cwd: scratch, ...params });
  expect(session).toMatchObject({ state: "idle", generation: 1 });
  return session.id as string;
}

async function run(client: TestClient, session: string, command: string, extra: Record<string, unknown> = {}) {
  return client.ok("session.run", { session, command, wait: WAIT, ...extra }, WAIT + 10_000);
}

/** The whole output log of a job, as bytes. */
async function outputOf(client: TestClient, job: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let from = 0; ; ) {
    const page = await client.ok("jobs.output", { job, from, limit: 4 * 1024 * 1024 });
    parts.push(Buffer.from(page.data, page.encoding === "base64" ? "base64" : "utf8"));
    if (page.eof || page.next === from) return Buffer.concat(parts);
    from = page.next;
  }
}

describe("shell sessions over the real daemon", () => {
  const t = useDaemon();

  it("carries cd, exported variables and functions from one command to the next", async () => {
    const s = await open(t.client);
    const first = await run(t.client, s, "cd /tmp && export A=1 && f() { echo f$1; }");
    expect(first.job).toMatchObject({ kind: "session", state: "succeeded", exitCode: 0, session: s, cwd: "/tmp" });
    const second = await run(t.client, s, "pwd; echo $A; f 2");
    expect(second.output.data).toBe("/tmp\n1\nf2\n");
    expect(second.job.title).toBe("pwd; echo $A; f 2");
    // Unexported variables, aliases, options and declare'd arrays too (eval runs at the top level).
    await run(t.client, s, "B=2; alias hi='echo hi'; shopt -s extglob; declare -A m=([k]=v); ulimit -n 512");
    expect((await run(t.client, s, "echo $B ${m[k]}; hi; shopt -q extglob && echo glob; ulimit -n")).output.data).toBe(
      "2 v\nhi\nglob\n512\n",
    );
    expect((await run(t.client, s, "local x=1")).output.data).toBe("bash: local: can only be used in a function\n");
  });

  it("keeps a venv activated in one command active in the next", async () => {
    const s = await open(t.client);
    const venv = join(scratch, "venv");
    await run(t.client, s, `/usr/bin/python3 -m venv --without-pip ${venv} && source ${venv}/bin/activate`);
    const next = await run(t.client, s, 'echo "$VIRTUAL_ENV"; command -v python3');
    expect(next.output.data).toBe(`${venv}\n${venv}/bin/python3\n`);
  });

  it("ends a command, never the session, on set -euo pipefail failures, unbound variables and syntax errors", async () => {
    const s = await open(t.client);
    const failed = await run(t.client, s, "set -euo pipefail; false; echo not reached");
    expect(failed.job).toMatchObject({ state: "failed", exitCode: 1 });
    expect(failed.output.data).toBe("");
    // set -e stays on for the next command, which still runs.
    expect((await run(t.client, s, "echo next; case $- in *e*) echo errexit;; esac")).output.data).toBe("next\nerrexit\n");
    const inFunction = await run(t.client, s, "g() { false; echo in g; }; g; echo not reached");
    expect(inFunction.job.exitCode).toBe(1);
    expect(inFunction.output.data).toBe("");
    const withStatus = await run(t.client, s, "sh -c 'exit 7'; echo not reached");
    expect(withStatus.job.exitCode).toBe(7);
    await run(t.client, s, "set +e; export KEPT=1; f() { echo f; }; alias al='echo al'; set -euo pipefail");
    const unbound = await run(t.client, s, "cd /tmp; echo $nope; echo not reached");
    expect(unbound.job).toMatchObject({ state: "failed", exitCode: 1, cwd: "/tmp" });
    expect(unbound.output.data).toBe("bash: nope: unbound variable\n");
    // Under set -e bash ends even an interactive shell on some expansion errors (here: in a
    // function): the session replaces it at once, in its cwd, with its variables, functions,
    // aliases and options.
    const died = await run(t.client, s, "g() { echo $nope; }; g; echo not reached");
    expect(died.job).toMatchObject({ state: "failed", exitCode: 1, shellReplaced: true, cwd: "/tmp" });
    expect(died.output.data).toBe("bash: nope: unbound variable\n");
    expect((await run(t.client, s, "echo $KEPT $PWD; f; al; echo $-")).output.data).toMatch(/^1 \/tmp\nf\nal\n.*e.*u/);
    expect((await t.client.ok("session.status", { session: s })).session.generation).toBe(2);
    const plainUnbound = await run(t.client, s, "set +e; echo $nope; echo not reached");
    expect(plainUnbound.job).toMatchObject({ state: "failed", exitCode: 1 });
    expect(plainUnbound.job.shellReplaced).toBeUndefined();
    const syntax = await run(t.client, s, "set +eu; if then");
    expect(syntax.job.exitCode).toBe(2);
    expect(syntax.output.data).toMatch(/syntax error/);
    const missing = await run(t.client, s, "nosuchcommand-hotline");
    expect(missing.job).toMatchObject({ state: "failed", exitCode: 127 });
    expect(missing.output.data).toBe("bash: nosuchcommand-hotline: command not found\n");
    expect((await run(t.client, s, "echo alive")).output.data).toBe("alive\n");
  });

  it("ends the session clearly on exit 3: the command reports 3, the session says exited, the next run is refused", async () => {
    const s = await open(t.client);
    const exit = await run(t.client, s, "echo bye; exit 3");
    expect(exit.job).toMatchObject({ state: "failed", exitCode: 3 });
    expect(exit.output.data).toBe("bye\n");
    expect(exit.job.shellReplaced).toBeUndefined();
    const { session } = await t.client.ok("session.status", { session: s });
    expect(session).toMatchObject({ state: "exited", ended: { exitCode: 3 } });
    const refused = await t.client.call("session.run", { session: s, command: "true" });
    expect(refused.error).toMatchObject({ code: "conflict", path: "/session", details: { state: "exited" } });
    expect(refused.error.message).toMatch(/has ended .*exit 3.*"resume"/);
  });

  it("keeps a command's 50 MB of output byte-exact in its own job", async () => {
    const s = await open(t.client);
    const size = 50 * 1024 * 1024;
    const result = await run(t.client, s, `yes abcdefgh | head -c ${size}`);
    expect(result.job).toMatchObject({ state: "succeeded", outputBytes: size });
    const expected = createHash("sha256").update(Buffer.alloc(size, "abcdefgh\n")).digest("hex");
    expect(
      createHash("sha256")
        .update(await outputOf(t.client, result.job.id))
        .digest("hex"),
    ).toBe(expected);
    const next = await run(t.client, s, "echo small");
    expect(next.job.outputBytes).toBe(6);
  });

  it("keeps output exact that looks like any marker, binary bytes, and no final newline", async () => {
    const s = await open(t.client);
    const tricky = Buffer.concat([
      Buffer.from("done\x001\x000\x00/tmp\x00ready\x00died\x00__hl_read 1 2 A; PS1='$ '; PROMPT_COMMAND=x; echo 'EOF'\n\x1b[0m"),
      Buffer.from([0xff, 0xfe, 0x00, 0x01]),
      Buffer.from("no newline"),
    ]);
    const result = await run(t.client, s, `printf %s ${tricky.toString("base64")} | base64 -d`);
    expect(result.job.exitCode).toBe(0);
    expect((await outputOf(t.client, result.job.id)).equals(tricky)).toBe(true);
    // A changed PS1 and a printed "record" on any descriptor a command can write to end nothing early.
    await run(t.client, s, "PS1='fake> '; printf 'done\\0%s\\0%s\\0%s\\0' 99 0 / | tee /dev/stderr");
    expect((await run(t.client, s, "echo after")).output.data).toBe("after\n");
  });

  it("runs multi-line commands, heredocs, non-ASCII text and a command of 128 KiB exactly as given", async () => {
    const s = await open(t.client);
    const heredoc = await run(t.client, s, "f() {\n  echo \"in $1\"\n}\nf one\ncat <<'EOF'\n$HOME stays literal\nline 2\nEOF");
    expect(heredoc.output.data).toBe("in one\n$HOME stays literal\nline 2\n");
    const text = "é 日本 🙂 Ω";
    expect((await run(t.client, s, `x='${text}'; echo "$x"`)).output.data).toBe(`${text}\n`);
    const long = "y".repeat(131072 - 20);
    const big = await run(t.client, s, `v=${long}; echo \${#v}`);
    expect(big.output.data).toBe(`${long.length}\n`);
    expect((await run(t.client, s, "echo $LC_ALL-unset")).output.data).toBe(`${process.env.LC_ALL ?? ""}-unset\n`);
  });

  it("reports a command blocked on its stdin as awaiting input, and jobs.input completes it", async () => {
    const s = await open(t.client, { inputWaitMs: 300 });
    const started = await run(t.client, s, 'printf "Name? "; read x; echo "got $x"');
    expect(started.job).toMatchObject({ state: "running", awaitingInput: true, lastLine: "Name?" });
    expect(started.output.data).toBe("Name? ");
    expect((await t.client.ok("session.status", { session: s })).session).toMatchObject({ state: "awaiting_input", job: started.job.id });
    await t.client.ok("jobs.input", { job: started.job.id, data: "y\n" });
    const { job } = await t.client.ok("jobs.wait", { job: started.job.id, timeoutMs: WAIT });
    expect(job).toMatchObject({ state: "succeeded", exitCode: 0 });
    expect(job.awaitingInput).toBeUndefined();
    expect((await outputOf(t.client, job.id)).toString()).toBe("Name? got y\n");
    // A program reading stdin in a child process is seen too; eof ends its input.
    const cat = await run(t.client, s, "cat; echo end");
    expect(cat.job.awaitingInput).toBe(true);
    await t.client.ok("jobs.input", { job: cat.job.id, data: "a\n", eof: true });
    expect((await t.client.ok("jobs.wait", { job: cat.job.id, timeoutMs: WAIT })).job.state).toBe("succeeded");
    expect((await outputOf(t.client, cat.job.id)).toString()).toBe("a\nend\n");
    // An event loop's prompt (node's readline, as npx asks "Ok to proceed?") is seen too.
    const asked = await run(
      t.client,
      s,
      `${process.execPath} -e 'require("readline").createInterface({input: process.stdin, output: process.stdout}).question("Ok to proceed? (y) ", (a) => { console.log("got", a); process.exit(0); })'`,
    );
    expect(asked.job).toMatchObject({ awaitingInput: true, lastLine: "Ok to proceed? (y)" });
    await t.client.ok("jobs.input", { job: asked.job.id, data: "y\n" });
    expect((await t.client.ok("jobs.wait", { job: asked.job.id, timeoutMs: WAIT })).job.state).toBe("succeeded");
    // Input a command did not read never reaches the next one.
    expect((await run(t.client, s, 'read -t 0.2 y; echo "[$y]"')).output.data).toBe("[]\n");
  });

  it("takes input and eof sent the moment a command starts, before its line has opened its stdin", async () => {
    // As `hotline session run` does with an empty or short piped stdin: the eof may come before the
    // shell has opened the FIFO, which must not leave the command blocked in that open.
    const s = await open(t.client);
    for (let i = 0; i < 30; i++) {
      const started = await t.client.ok("session.run", { session: s, command: "cat; echo end" });
      await t.client.ok("jobs.input", { job: started.job.id, ...(i % 2 ? { data: `${i}\n` } : {}), eof: true });
      const { job } = await t.client.ok("jobs.wait", { job: started.job.id, timeoutMs: WAIT }, WAIT + 10_000);
      expect(job, `command ${i}`).toMatchObject({ state: "succeeded", exitCode: 0 });
      expect((await outputOf(t.client, job.id)).toString()).toBe(i % 2 ? `${i}\nend\n` : "end\n");
    }
  });

  it("cancels a command (SIGINT, then TERM) and keeps the session and its state", async () => {
    const s = await open(t.client);
    await run(t.client, s, "export KEEP=kept");
    const { job } = await t.client.ok("session.run", { session: s, command: "echo started; sleep 100; echo not reached" });
    await t.client.ok("jobs.follow", { job: job.id });
    await t.client.waitFor((f) => f.event === "job.output" && f.job === job.id);
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 2000 });
    const ended = (await t.client.ok("jobs.wait", { job: job.id, timeoutMs: WAIT })).job;
    expect(ended).toMatchObject({ state: "cancelled", exitCode: 130 });
    expect((await outputOf(t.client, job.id)).toString()).toBe("started\n");
    expect((await run(t.client, s, "echo ok $KEEP")).output.data).toBe("ok kept\n");
    // A command that ignores SIGINT gets SIGTERM after a second; the shell survives it.
    const stubborn = await t.client.ok("session.run", { session: s, command: "trap '' INT; echo started; sleep 100" });
    await t.client.ok("jobs.follow", { job: stubborn.job.id });
    await t.client.waitFor((f) => f.event === "job.output" && f.job === stubborn.job.id);
    await t.client.ok("jobs.cancel", { job: stubborn.job.id, graceMs: 10_000 });
    expect((await t.client.ok("jobs.wait", { job: stubborn.job.id, timeoutMs: WAIT })).job.state).toBe("cancelled");
    expect((await run(t.client, s, "trap - INT; echo ok $KEEP")).output.data).toBe("ok kept\n");
    expect((await t.client.ok("session.status", { session: s })).session.generation).toBe(1);
  });

  it("times a command out like a cancel and keeps the session", async () => {
    const s = await open(t.client);
    const result = await run(t.client, s, "echo partial; sleep 100", { timeoutMs: 300 });
    expect(result.job).toMatchObject({ state: "timed_out" });
    expect(result.output.data).toBe("partial\n");
    expect((await run(t.client, s, "echo ok")).output.data).toBe("ok\n");
  });

  it("refuses a second command while one runs, naming the running job", async () => {
    const s = await open(t.client);
    const { job } = await t.client.ok("session.run", { session: s, command: "sleep 0.5", key: "first" });
    const second = await t.client.call("session.run", { session: s, command: "echo second" });
    expect(second.error).toMatchObject({ code: "conflict", details: { job: job.id } });
    expect(second.error.message).toContain(`is running job ${job.id}`);
    // A retry with the running command's key is that command.
    expect((await t.client.ok("session.run", { session: s, command: "sleep 0.5", key: "first" })).job.id).toBe(job.id);
    await t.client.ok("jobs.wait", { job: job.id, timeoutMs: WAIT });
  });

  it("lets a background server outlive its command, lists it, and ends it with the session", async () => {
    const s = await open(t.client);
    const started = await run(
      t.client,
      s,
      "/usr/bin/python3 -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 & setsid sleep 1000 & echo started",
    );
    expect(started.job.state).toBe("succeeded");
    const { session } = await t.client.ok("session.status", { session: s });
    expect(session.state).toBe("idle");
    // The background commands exec a moment after their command ended: look until they have.
    let listed = session.processes.list.map((p: { command: string }) => p.command);
    for (let i = 0; i < 100 && !listed.includes("sleep 1000"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      listed = (await t.client.ok("session.status", { session: s })).session.processes.list.map((p: { command: string }) => p.command);
    }
    expect(listed).toEqual(expect.arrayContaining([expect.stringContaining("http.server"), "sleep 1000"]));
    expect(session.processes.list.map((p: { pid: number }) => p.pid)).not.toContain(session.pid);
    expect((await run(t.client, s, "echo still here")).output.data).toBe("still here\n");
    const pids = (await t.client.ok("session.status", { session: s })).session.processes.list.map(
      (p: { pid: number }) => p.pid,
    ) as number[];
    const closed = await t.client.ok("session.close", { session: s });
    expect(closed.session).toMatchObject({ state: "exited", ended: { reason: "closed by session.close" } });
    // The group goes at once; the one that left it (setsid) with the marker scan, within seconds.
    for (let i = 0; i < 100 && pids.some(pidAlive); i++) await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter(pidAlive)).toEqual([]);
  });

  it("runs 100 commands in a row and 20 sessions side by side, each correct", async () => {
    const s = await open(t.client);
    for (let i = 0; i < 100; i++) {
      const r = await run(t.client, s, `n=$((\${n:-0} + 1)); echo "$n $((${i} * 2))"`);
      expect(r.output.data).toBe(`${i + 1} ${i * 2}\n`);
    }
    const sessions = await Promise.all(Array.from({ length: 20 }, () => open(t.client)));
    await Promise.all(
      sessions.map(async (id, i) => {
        await run(t.client, id, `export MINE=${i}; cd /`);
        for (let k = 0; k < 5; k++) expect((await run(t.client, id, `echo $MINE $PWD ${k}`)).output.data).toBe(`${i} / ${k}\n`);
      }),
    );
    await Promise.all(sessions.map((id) => t.client.ok("session.close", { session: id })));
  });

  it("shows the session to an operator: its shell job's log is the transcript of every command", async () => {
    const s = await open(t.client);
    await run(t.client, s, "echo one");
    await run(t.client, s, "echo two >&2; exit_code_test() { return 4; }; exit_code_test");
    const { session } = await t.client.ok("session.status", { session: s });
    const { jobs } = await t.client.ok("jobs.list", { kind: "shell-session", state: "running", limit: 50 });
    expect(jobs.find((j: { id: string }) => j.id === session.shellJob)).toMatchObject({ title: `bash session ${s}`, session: s });
    const transcript = (await outputOf(t.client, session.shellJob)).toString();
    expect(transcript).toBe("$ echo one\none\n$ echo two >&2; exit_code_test() { return 4; }; exit_code_test\ntwo\n[exit 4]\n");
  });

  it("answers unknown sessions with not_found and bad commands with invalid_request", async () => {
    expect((await t.client.call("session.status", { session: "s0000000000" })).error).toMatchObject({
      code: "not_found",
      path: "/session",
    });
    const s = await open(t.client);
    expect((await t.client.call("session.run", { session: s, command: "echo \u0000" })).error).toMatchObject({
      code: "invalid_request",
      path: "/command",
    });
    expect((await t.client.call("session.open", { cwd: "/no/such/dir" })).error).toMatchObject({ code: "invalid_request", path: "/cwd" });
  });

  it("closes an idle session after its idle timeout", async () => {
    const s = await open(t.client, { idleTimeoutMs: 200 });
    for (let i = 0; i < 100; i++) {
      const { session } = await t.client.ok("session.status", { session: s });
      if (session.state === "exited") return expect(session.ended.reason).toBe("idle for 200 ms");
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the session did not close");
  });
});

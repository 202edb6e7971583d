import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pidAlive } from "../../daemon/process/index.js";
import { TestDaemon } from "../helpers/daemon.js";
import { mcpClient, textOf } from "../mcp/mcp-client.js";

type Structured = Record<string, any>;

describe("shell sessions through MCP (the official SDK client)", () => {
  let daemon: TestDaemon;
  let mcp: Client;
  beforeAll(async () => {
    daemon = await TestDaemon.start();
    mcp = await mcpClient(daemon, "http");
  });
  afterAll(async () => {
    await mcp?.close();
    await daemon?.stop();
    daemon?.cleanup();
  });

  async function call(name: string, args: Record<string, unknown>): Promise<Structured> {
    const result = await mcp.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as Structured;
  }

  async function open(extra: Record<string, unknown> = {}): Promise<string> {
    return (await call("session_open", { cwd: "/", ...extra })).session.id;
  }

  const run = (session: string, command: string, extra: Record<string, unknown> = {}) =>
    call("session_run", { session, command, ...extra });

  it("lists the session tools", async () => {
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["session_open", "session_run", "session_status", "session_list", "session_close"]));
  });

  it("carries state, ends commands not the session on set -e, and ends it on exit 3", async () => {
    const s = await open();
    expect((await run(s, "cd /tmp && export A=1 && f() { echo f$1; }")).job).toMatchObject({ exitCode: 0, cwd: "/tmp", session: s });
    expect((await run(s, "pwd; echo $A; f 2")).output.data).toBe("/tmp\n1\nf2\n");
    const failed = await run(s, "set -euo pipefail; false; echo no");
    expect(failed.job).toMatchObject({ state: "failed", exitCode: 1 });
    expect((await run(s, "echo next")).output.data).toBe("next\n");
    expect((await run(s, "exit 3")).job.exitCode).toBe(3);
    expect((await call("session_status", { session: s })).session.state).toBe("exited");
    const refused = await mcp.callTool({ name: "session_run", arguments: { session: s, command: "true" } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: "conflict" });
  });

  it("keeps 50 MB byte-exact and marker-like output exact", async () => {
    const s = await open();
    const size = 50 * 1024 * 1024;
    const big = await run(s, `yes abcdefgh | head -c ${size}`);
    expect(big.job.outputBytes).toBe(size);
    const hash = createHash("sha256");
    for (let from = 0; ; ) {
      const page = await call("jobs_output", { job: big.job.id, from, limit: 4 * 1024 * 1024 });
      hash.update(Buffer.from(page.data, page.encoding === "base64" ? "base64" : "utf8"));
      if (page.eof || page.next === from) break;
      from = page.next;
    }
    expect(hash.digest("hex")).toBe(createHash("sha256").update(Buffer.alloc(size, "abcdefgh\n")).digest("hex"));
    const odd = await run(s, "printf 'done\\0 1 0 /\\0ready PS1=$ no newline'");
    expect(Buffer.from(odd.output.data, odd.output.encoding === "base64" ? "base64" : "utf8")).toEqual(
      Buffer.from("done\x00 1 0 /\x00ready PS1=$ no newline"),
    );
  });

  it("returns at once when a command awaits input; jobs_input completes it", async () => {
    const s = await open({ inputWaitMs: 300 });
    const asked = await run(s, 'printf "Ok to proceed? (y) "; read x; echo "got $x"', { wait: 60_000 });
    expect(asked.job).toMatchObject({ state: "running", awaitingInput: true, lastLine: "Ok to proceed? (y)" });
    await call("jobs_input", { job: asked.job.id, data: "y\n" });
    const waited = await call("jobs_wait", { job: asked.job.id, timeoutMs: 30_000 });
    expect(waited.job.state).toBe("succeeded");
    expect((await call("jobs_output", { job: asked.job.id })).data).toBe("Ok to proceed? (y) got y\n");
  });

  it("cancels a command and keeps the session; a background server is listed and ends with the session", async () => {
    const s = await open();
    await run(s, "export KEEP=kept");
    const sleeping = await run(s, "sleep 100", { wait: 300 });
    expect(sleeping.job.state).toBe("running");
    await call("jobs_cancel", { job: sleeping.job.id, graceMs: 2000, wait: 10_000 });
    expect((await run(s, "echo ok $KEEP")).output.data).toBe("ok kept\n");
    await run(s, "/usr/bin/python3 -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 &");
    let processes: Array<{ pid: number; command: string }> = [];
    for (let i = 0; i < 100 && !processes.some((p) => p.command.includes("http.server")); i++) {
      processes = (await call("session_status", { session: s })).session.processes.list;
      if (!processes.some((p) => p.command.includes("http.server"))) await new Promise((r) => setTimeout(r, 50));
    }
    const server = processes.find((p) => p.command.includes("http.server"))!;
    expect(server).toBeDefined();
    expect((await call("session_close", { session: s })).session.state).toBe("exited");
    for (let i = 0; i < 100 && pidAlive(server.pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(pidAlive(server.pid)).toBe(false);
  });

  it("runs 100 commands in a row and 20 sessions side by side", async () => {
    const s = await open();
    for (let i = 0; i < 100; i++) expect((await run(s, `echo ${i}`)).output.data).toBe(`${i}\n`);
    const ids = await Promise.all(Array.from({ length: 20 }, () => open()));
    await Promise.all(
      ids.map(async (id, i) => {
        await run(id, `export MINE=${i}`);
        for (let k = 0; k < 3; k++) expect((await run(id, `echo $MINE ${k}`)).output.data).toBe(`${i} ${k}\n`);
      }),
    );
    await Promise.all(ids.map((id) => call("session_close", { session: id })));
    expect((await call("session_list", {})).sessions.length).toBeGreaterThanOrEqual(21);
  });
});

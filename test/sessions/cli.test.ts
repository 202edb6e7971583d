import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, useDaemon } from "../helpers/daemon.js";

type Ran = { code: number | null; stdout: string; stderr: string };

describe("hotline session open|run|status|list|close", () => {
  const t = useDaemon();

  /** Runs the CLI; `onStderr` sees its stderr as it comes (to answer a prompt on its stdin). */
  function cli(args: string[], options: { stdin?: string; onStderr?: (text: string, stdin: NodeJS.WritableStream) => void } = {}) {
    const proc = spawn(process.execPath, [CLI_MAIN, ...args], { env: t.daemon.cliEnv, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => (stdout += d));
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d;
      options.onStderr?.(stderr, proc.stdin);
    });
    if (options.stdin !== undefined) proc.stdin.end(options.stdin);
    else if (!options.onStderr) proc.stdin.end();
    const done = new Promise<Ran>((resolve) => proc.once("exit", (code) => resolve({ code, stdout, stderr })));
    return { proc, done };
  }
  const run = (args: string[], stdin?: string) => cli(args, { stdin }).done;

  it("opens a session, runs commands whose state carries, exits with each command's code, and closes", async () => {
    const opened = await run(["session", "open", "--cwd", "/"]);
    expect(opened.code, opened.stderr).toBe(0);
    const id = opened.stdout.trim();
    expect(id).toMatch(/^s[0-9a-z]+$/);
    expect((await run(["session", "run", id, "--", "cd /tmp && export A=1 && f() { echo f$1; }"])).code).toBe(0);
    const second = await run(["session", "run", id, "--", "pwd;", "echo", "$A;", "f", "2"]);
    expect(second).toMatchObject({ code: 0, stdout: "/tmp\n1\nf2\n" });
    expect(await run(["session", "run", id, "--", "set -euo pipefail; echo err >&2; false; echo no"])).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "err\n",
    });
    for (let i = 0; i < 10; i++) expect((await run(["session", "run", id, "--", `echo ${i}`])).stdout).toBe(`${i}\n`);
    const status = await run(["session", "status", id, "--json"]);
    expect(JSON.parse(status.stdout).session).toMatchObject({ id, state: "idle", cwd: "/tmp" });
    expect((await run(["session", "list"])).stdout).toContain(id);
    expect((await run(["session", "run", id, "--", "exit 3"])).code).toBe(3);
    const refused = await run(["session", "run", id, "--", "true"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/conflict: session .* has ended/);
  });

  it("passes piped stdin to the command, and says when a command waits for input", async () => {
    const id = (await run(["session", "open", "--cwd", "/tmp", "--input-wait", "300ms"])).stdout.trim();
    expect((await run(["session", "run", id, "--", "read x; echo got $x"], "piped\n")).stdout).toBe("got piped\n");
    let answered = false;
    const asked = cli(["session", "run", id, "--", 'printf "Password: "; read x; echo "got $x"'], {
      onStderr: (text, stdin) => {
        if (answered || !text.includes("waits for input")) return;
        answered = true;
        stdin.end("secret\n");
      },
    });
    const { code, stdout, stderr } = await asked.done;
    expect(stderr).toContain('waits for input ("Password:")');
    expect({ code, stdout }).toEqual({ code: 0, stdout: "Password: got secret\n" });
    await run(["session", "close", id]);
  });

  it("cancels the command on Ctrl-C and keeps the session", async () => {
    const id = (await run(["session", "open", "--cwd", "/tmp"])).stdout.trim();
    await run(["session", "run", id, "--", "export KEEP=kept"]);
    const sleeping = cli(["session", "run", id, "--", "echo started; sleep 100"], {});
    await new Promise<void>((resolve) => sleeping.proc.stdout.on("data", () => resolve()));
    sleeping.proc.kill("SIGINT");
    expect((await sleeping.done).code).toBe(130);
    expect((await run(["session", "run", id, "--", "echo ok $KEEP"])).stdout).toBe("ok kept\n");
    const closed = await run(["session", "close", id, "--json"]);
    expect(JSON.parse(closed.stdout).session.state).toBe("exited");
  });
});

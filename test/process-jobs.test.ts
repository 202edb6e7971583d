import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

describe("process jobs: titles", () => {
  const t = useDaemon();

  it("titles an argv job as a shell would need it typed", async () => {
    const loop = await t.client.ok("shell", { command: ["bash", "-c", "exit 0; while :; do sleep 1 & wait; done"], wait: 10_000 });
    expect(loop.job.title).toBe("bash -c 'exit 0; while :; do sleep 1 & wait; done'");
    const quoted = await t.client.ok("shell", { command: ["printf", "%s|", "it's", "", "plain/path.txt"], wait: 10_000 });
    expect(quoted.job.title).toBe(`printf '%s|' 'it'\\''s' '' plain/path.txt`);
    expect(quoted.output.data).toBe("it's||plain/path.txt|");
  });
});

describe("process jobs: the launcher's environment stays out", () => {
  // As `npm start` (or npx, pnpm, yarn) would launch the daemon.
  const systemPath = "/usr/local/bin:/usr/bin:/bin";
  const t = useDaemon({
    env: {
      npm_lifecycle_event: "start",
      npm_package_name: "hotline",
      npm_config_cache: "/root/.npm",
      INIT_CWD: "/work/project",
      NODE: process.execPath,
      COLOR: "0",
      PATH: `/work/project/node_modules/.bin:/work/node_modules/.bin:/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:${systemPath}`,
      KEEP_ME: "machine setting",
    },
  });

  it("drops npm_*, INIT_CWD, NODE, COLOR and the node_modules/.bin entries of PATH; keeps the rest", async () => {
    const result = await t.client.ok("shell", { command: ["/usr/bin/env"], wait: 10_000 });
    const env = result.output.data as string;
    expect(env).not.toMatch(/^(npm_|INIT_CWD=|NODE=|COLOR=)/im);
    expect(env).toMatch(/^KEEP_ME=machine setting$/m);
    expect(env).toMatch(new RegExp(`^PATH=${systemPath}$`, "m"));
  });
});

describe("terminal jobs on a fresh daemon started from a plain xterm with LANG=C", () => {
  const t = useDaemon({ env: { TERM: "xterm", LANG: "C" } });

  // Must stay the first terminal of this daemon: it proves the start reply's `running` holds at once.
  it("takes input and resize sent right after the first terminal's start reply", async () => {
    const { job } = await t.client.ok("shell", { command: 'read line; stty size; echo "got $line"', pty: { cols: 80, rows: 24 } });
    expect(job.state).toBe("running");
    const [resized, typed] = await Promise.all([
      t.client.call("jobs.resize", { job: job.id, cols: 100, rows: 30 }),
      t.client.call("jobs.input", { job: job.id, data: "hi\r" }),
    ]);
    expect(resized.error).toBeUndefined();
    expect(typed.error).toBeUndefined();
    const { job: final } = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    expect(final.state).toBe("succeeded");
    const out = (await t.client.ok("jobs.output", { job: job.id })).data as string;
    expect(out).toContain("30 100\r\n");
    expect(out).toContain("got hi\r\n");
  });

  it("advertises 256 colours, true colour and a UTF-8 LC_CTYPE; the job's own env and LC_ALL stay as given", async () => {
    const show = 'echo "[$TERM|$COLORTERM|$LC_CTYPE|$LC_ALL]"';
    const plain = await t.client.ok("shell", { command: show, pty: { cols: 80, rows: 24 }, wait: 10_000 });
    expect(plain.output.data).toContain("[xterm-256color|truecolor|C.UTF-8|]");
    const own = await t.client.ok("shell", {
      command: show,
      pty: { cols: 80, rows: 24 },
      env: { TERM: "vt100", LC_ALL: "C" },
      wait: 10_000,
    });
    expect(own.output.data).toContain("[vt100|truecolor|C.UTF-8|C]");
    const utf8 = await t.client.ok("shell", { command: show, pty: { cols: 80, rows: 24 }, env: { LANG: "en_US.UTF-8" }, wait: 10_000 });
    expect(utf8.output.data).toContain("[xterm-256color|truecolor||]");
    const pipes = await t.client.ok("shell", { command: show, wait: 10_000 });
    expect(pipes.output.data).toBe("[xterm|||]\n");
  });
});

describe("terminal jobs: the last bytes a job writes", () => {
  const t = useDaemon();

  // Linux delivers a terminal's last bytes to the master asynchronously; the job's exit used to
  // win that race now and then (4 of 120 such jobs lost their last line before the fix).
  it("are never lost when the job exits right after writing them (120 jobs, 6 at a time)", async () => {
    const lost: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 20; i++) {
          const { job } = await t.client.ok("shell", { command: 'read line; stty size; echo "got $line"', pty: { cols: 80, rows: 24 } });
          await Promise.all([
            t.client.ok("jobs.resize", { job: job.id, cols: 100, rows: 30 }),
            t.client.ok("jobs.input", { job: job.id, data: "hi\r" }),
          ]);
          await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
          const out = (await t.client.ok("jobs.output", { job: job.id })).data as string;
          if (!out.includes("got hi\r\n")) lost.push(JSON.stringify(out));
        }
      }),
    );
    expect(lost).toEqual([]);
  });
});

describe("process jobs: what exec cannot take", () => {
  const t = useDaemon({ args: ["--max-payload", String(8 * 1024 * 1024)] });
  // Exactly the 128 KiB the schema allows: one byte too many for exec once its NUL is counted.
  const big = "a".repeat(128 * 1024);

  it("refuses a command, argument or variable over 128 KiB with limit_exceeded naming the field", async () => {
    const command = await t.client.call("shell", { command: `echo ${big.slice(5)}` });
    expect(command.error).toMatchObject({ code: "limit_exceeded", path: "/command" });
    expect(command.error.message).toMatch(/128 KiB.*stdin/);
    const arg = await t.client.call("shell", { command: ["echo", big] });
    expect(arg.error).toMatchObject({ code: "limit_exceeded", path: "/command/1" });
    const env = await t.client.call("shell", { command: "true", env: { BIG: big } });
    expect(env.error).toMatchObject({ code: "limit_exceeded", path: "/env/BIG" });
    expect(env.error.message).toContain("BIG");
    const terminal = await t.client.call("shell", { command: ["echo", big], pty: { cols: 80, rows: 24 } });
    expect(terminal.error).toMatchObject({ code: "limit_exceeded", path: "/command/1" });
  });

  it("refuses arguments and environment over exec's total with limit_exceeded", async () => {
    const env = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`PART_${i}`, "b".repeat(100 * 1024)]));
    const reply = await t.client.call("shell", { command: "true", env });
    expect(reply.error).toMatchObject({ code: "limit_exceeded" });
    expect(reply.error.message).toMatch(/together.*stdin/);
  });

  it("reports a file that is not executable as invalid_request with exit code 126", async () => {
    const result = await t.client.ok("shell", { command: ["/etc/passwd"], wait: 10_000 });
    expect(result.job).toMatchObject({ state: "failed", exitCode: 126 });
    expect(result.job.error.code).toBe("invalid_request");
    expect(result.job.error.message).toMatch(/chmod \+x/);
  });
});

/** Pids of live processes whose command line starts with `prefix` (not zombies, not the job's bash -c). */
function processesRunning(prefix: string): number[] {
  const out = execFileSync("ps", ["-e", "-o", "pid=,stat=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && !m[2]!.startsWith("Z") && m[3]!.startsWith(prefix))
    .map((m) => Number(m[1]));
}

describe("process jobs: processes that leave the job's group", () => {
  const t = useDaemon();
  const stray = (n: number): string => `sleep ${987_000 + n}`;
  /** Shell that returns only once the stray runs, so a test never passes by looking too early. */
  const untilRunning = (n: number): string => `until pgrep -xf '${stray(n)}' >/dev/null; do sleep 0.02; done; echo started`;
  afterAll(() => {
    // Leftovers of a failing run must not outlive the test.
    for (let n = 0; n < 4; n++) for (const pid of processesRunning(stray(n))) process.kill(pid, "SIGKILL");
  });

  it("marks every process of a job with AGENT_JOB_ID, over the job's own value", async () => {
    const result = await t.client.ok("shell", { command: 'echo "$AGENT_JOB_ID"', env: { AGENT_JOB_ID: "mine" }, wait: 10_000 });
    expect(result.output.data).toBe(`${result.job.id}\n`);
  });

  it("stops a setsid grandchild after the job ends", async () => {
    const result = await t.client.ok("shell", {
      command: `setsid ${stray(0)} </dev/null >/dev/null 2>&1 & ${untilRunning(0)}`,
      wait: 10_000,
    });
    expect(result.job.state).toBe("succeeded");
    await expect.poll(() => processesRunning(stray(0)), { timeout: 15_000, interval: 100 }).toEqual([]);
  });

  it("ends a job whose setsid grandchild holds its output pipes, and stops that grandchild", async () => {
    const result = await t.client.ok("shell", { command: `setsid ${stray(1)} & ${untilRunning(1)}`, wait: 20_000 });
    expect(result.job.state).toBe("succeeded");
    expect(result.output.data).toBe("started\n");
    expect(processesRunning(stray(1))).toEqual([]);
  });

  it("stops a setsid grandchild on cancel", async () => {
    const { job } = await t.client.ok("shell", {
      command: `setsid ${stray(2)} </dev/null >/dev/null 2>&1 & ${untilRunning(2)}; sleep 600`,
    });
    await t.client.ok("jobs.follow", { job: job.id });
    await t.client.waitFor((f) => f.event === "job.output" && f.job === job.id);
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 500 });
    const exit = await t.client.waitForExit(job.id);
    expect(exit.status.state).toBe("cancelled");
    await expect.poll(() => processesRunning(stray(2)), { timeout: 15_000, interval: 100 }).toEqual([]);
  });

  it("also stops a stray that ignores SIGTERM, with SIGKILL after the grace", async () => {
    const result = await t.client.ok("shell", {
      command: `setsid bash -c "trap '' TERM; exec ${stray(3)}" </dev/null >/dev/null 2>&1 & ${untilRunning(3)}`,
      wait: 10_000,
    });
    expect(result.job.state).toBe("succeeded");
    await expect.poll(() => processesRunning(stray(3)), { timeout: 15_000, interval: 100 }).toEqual([]);
  });
});

describe("process jobs: input with backpressure", () => {
  const t = useDaemon();
  const piece = "x".repeat(900 * 1024); // under the 1 MiB frame limit with its JSON around it

  it("answers written only for bytes the job took; a job that does not read gets a conflict at the deadline", async () => {
    const { job } = await t.client.ok("shell", { command: "sleep 600", stdin: true });
    const reply = await t.client.call("jobs.input", { job: job.id, data: piece, timeoutMs: 1000 });
    expect(reply.error).toMatchObject({ code: "conflict", path: "/data" });
    expect(reply.error.details.written).toBeLessThan(piece.length);
    expect(reply.error.message).toMatch(/not reading its input/);
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 500 });
    await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
  });

  it("bounds the input waiting for a job: past 4 MiB a request is refused whole with limit_exceeded", async () => {
    const { job } = await t.client.ok("shell", { command: "sleep 600", stdin: true });
    const replies = Array.from({ length: 5 }, () => t.client.call("jobs.input", { job: job.id, data: piece, timeoutMs: 60_000 }));
    const refused = await replies[4]!;
    expect(refused.error).toMatchObject({ code: "limit_exceeded", path: "/data" });
    expect(refused.error.message).toMatch(/wait for the replies to earlier jobs.input/);
    // Ending the job answers the waiting ones: they were not written.
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 500 });
    for (const reply of await Promise.all(replies.slice(0, 4))) expect(reply.error?.code).toBe("conflict");
  });

  it("delivers every byte, in order, to a job that reads", async () => {
    const { job } = await t.client.ok("shell", { command: "sha256sum", stdin: true });
    for (const mark of ["a", "b", "c"]) {
      expect((await t.client.ok("jobs.input", { job: job.id, data: mark + piece })).written).toBe(piece.length + 1);
    }
    await t.client.ok("jobs.input", { job: job.id, eof: true });
    const { job: final } = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    expect(final.state).toBe("succeeded");
    const { createHash } = await import("node:crypto");
    const expected = createHash("sha256").update(`a${piece}b${piece}c${piece}`).digest("hex");
    expect((await t.client.ok("jobs.output", { job: job.id })).data).toContain(expected);
  });

  it("gives a terminal that does not read the same backpressure", async () => {
    // Raw mode: a terminal in line mode takes (and drops) what overflows its line buffer instead.
    const { job } = await t.client.ok("shell", { command: "stty raw -echo; echo ready; sleep 600", pty: { cols: 80, rows: 24 } });
    await t.client.ok("jobs.follow", { job: job.id });
    await t.client.waitFor(() => t.client.outputOf(job.id).toString().includes("ready"));
    const reply = await t.client.call("jobs.input", { job: job.id, data: piece, timeoutMs: 1000 });
    expect(reply.error).toMatchObject({ code: "conflict", path: "/data" });
    expect(reply.error.details.written).toBeLessThan(piece.length);
    await t.client.ok("jobs.cancel", { job: job.id, graceMs: 500 });
    await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
  });
});

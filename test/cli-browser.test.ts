import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { spawn as spawnPty, type IPty } from "node-pty";
import { CLI_MAIN, useDaemon } from "./helpers/daemon.js";

/** Resolves when the pty's output matches, or fails with what it did show. */
function waitForOutput(output: () => string, pattern: RegExp, what: string, term: IPty, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    // Without escape sequences (bracketed-paste mode switches surround every command line).
    const check = (): boolean => pattern.test(output().replace(/\x1b\[[0-9;?]*[a-zA-Z]|\r/g, ""));
    if (check()) return resolve();
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out waiting for ${what}; the terminal showed:\n${output().slice(-2000)}`));
    }, timeoutMs);
    const sub = term.onData(() => {
      if (!check()) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

describe("hotline terminal and hotline console", () => {
  const ctx = useDaemon();

  it("attaches this terminal to a terminal job: typed keys run, SIGWINCH resizes it, Ctrl-] detaches and the job keeps running", async () => {
    const term = spawnPty(process.execPath, [CLI_MAIN, "terminal"], { cols: 90, rows: 20, env: ctx.daemon.cliEnv, name: "xterm-256color" });
    let output = "";
    term.onData((d) => (output += d));
    const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    try {
      await waitForOutput(() => output, /[#$] $/m, "the shell's prompt", term);
      term.write('echo hel""lo-$((6*7))\r');
      await waitForOutput(() => output, /^hello-42$/m, "hello-42", term);
      term.write("stty size\r");
      await waitForOutput(() => output, /^20 90$/m, "stty size 20 90", term);
      term.resize(70, 15); // the CLI gets SIGWINCH and resizes the job's pty
      // SIGWINCH and the typed keys reach the CLI on different fds: ask again until the new size shows.
      for (let attempt = 1; ; attempt++) {
        term.write("stty size\r");
        const seen = await waitForOutput(() => output, /^15 70$/m, "stty size 15 70 after the resize", term, 2000).then(
          () => true,
          () => attempt >= 5 && Promise.reject(new Error(`stty size never showed 15 70:\n${output.slice(-1000)}`)),
        );
        if (seen) break;
      }
      term.write("\x1d");
      expect(await exited).toBe(0);
      expect(output).toMatch(/detached from (j[0-9a-z]+)/);
    } finally {
      term.kill();
    }
    const job = /detached from (j[0-9a-z]+)/.exec(output)![1]!;
    expect((await ctx.client.ok("jobs.status", { job })).state).toBe("running");
    // Its link token was revoked at once: the attach used the CLI's own token.
    expect(((await ctx.client.ok("tokens.list")).tokens as Array<{ label?: string }>).filter((t) => t.label === "terminal link")).toEqual(
      [],
    );
    await ctx.client.ok("jobs.cancel", { job, signal: "SIGHUP", wait: 10_000 }); // an interactive bash ignores SIGTERM
  });

  it("--link prints a terminal link, also beside --cwd and a daemon --url; console prints a console link", () => {
    const link = /^http:\/\/127\.0\.0\.1:\d+\/web\/terminal#job=j[0-9a-z]+&token=hl_[\w-]+\n\(expires /;
    const terminal = execFileSync(process.execPath, [CLI_MAIN, "terminal", "--link"], { env: ctx.daemon.cliEnv, encoding: "utf8" });
    expect(terminal).toMatch(link);
    // --url names the daemon for every verb; a link is asked for with --link, wherever it stands.
    const named = execFileSync(process.execPath, [CLI_MAIN, "terminal", "--url", ctx.daemon.url, "--link", "--cwd", "/tmp"], {
      env: ctx.daemon.cliEnv,
      encoding: "utf8",
    });
    expect(named).toMatch(link);
    const console = execFileSync(process.execPath, [CLI_MAIN, "console", "--json"], { env: ctx.daemon.cliEnv, encoding: "utf8" });
    expect(JSON.parse(console)).toMatchObject({
      available: true,
      scope: "manage",
      consoleUrl: expect.stringMatching(/\/web\/console#token=hl_/),
    });
  });

  it("refuses to attach without a terminal and says to use --link", () => {
    let status = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, [CLI_MAIN, "terminal"], {
        env: ctx.daemon.cliEnv,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (err) {
      status = (err as { status: number }).status;
      stderr = (err as { stderr: string }).stderr;
    }
    expect(status).toBe(2);
    expect(stderr).toContain("--link");
  });
});

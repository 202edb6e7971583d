import { describe, expect, it, onTestFinished } from "vitest";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { CLI_MAIN, TestDaemon } from "./helpers/daemon.js";

/** The CLI's exit code when the daemon is not there or goes away (documented in its usage and the README). */
const DAEMON_UNAVAILABLE = 69;

interface Run {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
  /** Resolves once stdout contains `text`. */
  printed(text: string): Promise<void>;
}

function startCli(daemon: TestDaemon, args: string[]): Run {
  const proc = spawn(process.execPath, [CLI_MAIN, ...args], { env: daemon.cliEnv, stdio: ["ignore", "pipe", "pipe"] });
  const run: Run = {
    proc,
    stdout: "",
    stderr: "",
    exited: new Promise((resolve) => proc.once("exit", (code) => resolve(code))),
    printed: (text) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (run.stdout.includes(text)) resolve();
        };
        proc.stdout!.on("data", check);
        proc.once("exit", () => reject(new Error(`CLI exited before printing ${text}; stdout ${run.stdout}; stderr ${run.stderr}`)));
        check();
      }),
  };
  proc.stdout!.on("data", (d: Buffer) => (run.stdout += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (run.stderr += d.toString()));
  onTestFinished(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  });
  return run;
}

describe("CLI when the daemon goes away while it waits", () => {
  const cases = [
    { command: "shell", signal: "SIGTERM" },
    { command: "shell", signal: "SIGKILL" },
    { command: "tail -f", signal: "SIGTERM" },
    { command: "tail -f", signal: "SIGKILL" },
  ] as const;

  it.each(cases)("$command says so and exits $signal → 69; status afterwards shows lost", async ({ command, signal }) => {
    const daemon = await TestDaemon.start();
    let restarted: TestDaemon | undefined;
    onTestFinished(async () => {
      await daemon.stop();
      await restarted?.stop();
      daemon.cleanup();
    });
    let run: Run;
    let jobId: string;
    if (command === "shell") {
      run = startCli(daemon, ["shell", "--", "sh", "-c", "echo started; exec sleep 977.5"]);
      await run.printed("started");
    } else {
      const client = await daemon.client();
      const { job } = await client.ok("shell", { command: "echo started; exec sleep 977.5" });
      jobId = job.id;
      await client.close();
      run = startCli(daemon, ["tail", "-f", job.id]);
      await run.printed("started");
    }
    if (signal === "SIGTERM") await daemon.stop();
    else await daemon.kill();
    const code = await run.exited;

    expect(code).toBe(DAEMON_UNAVAILABLE);
    expect(run.stderr).toMatch(/^hotline: the daemon went away while following job j[0-9a-z]+ \(.+\)/);
    jobId ??= /job (j[0-9a-z]+)/.exec(run.stderr)![1]!;
    expect(run.stderr).toContain(`hotline status ${jobId}`);

    restarted = await TestDaemon.start({ dirs: daemon.dirs });
    const status = spawnSync(process.execPath, [CLI_MAIN, "status", jobId], { env: restarted.cliEnv, encoding: "utf8", timeout: 30_000 });
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^${jobId}\\s+lost\\b`));
  });
});

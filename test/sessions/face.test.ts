import { describe, expect, it, onTestFinished } from "vitest";
import pino from "pino";
import { SessionTable } from "../../daemon/sessions/index.js";
import { ended, jobManager, outputOf } from "../repl/harness.js";

function table() {
  const jobs = jobManager();
  const sessions = new SessionTable({
    jobs,
    resolver: { resolve: () => null },
    baseEnv: { ...process.env } as Record<string, string>,
    log: pino({ level: "silent" }),
  });
  onTestFinished(() => sessions.shutdown());
  return { jobs, sessions };
}

describe("the bash face, without the daemon around it", () => {
  it("carries state and reports each command's exit code and output", async () => {
    const { jobs, sessions } = table();
    const { session } = await sessions.openSession({ cwd: "/" });
    const a = await ended(jobs, session.run("cd /tmp && export A=1 && f() { echo f$1; }"));
    expect(a.status()).toMatchObject({ state: "succeeded", exitCode: 0, cwd: "/tmp" });
    const b = await ended(jobs, session.run("pwd; echo $A; f 2"));
    expect(outputOf(b).toString()).toBe("/tmp\n1\nf2\n");
    const c = await ended(jobs, session.run("set -euo pipefail; false; echo no"));
    expect(c.status()).toMatchObject({ state: "failed", exitCode: 1 });
    expect(outputOf(c).length).toBe(0);
    const d = await ended(jobs, session.run("echo still; echo $-"));
    expect(outputOf(d).toString()).toMatch(/^still\n.*e/);
    const e = await ended(jobs, session.run("set +eu; echo $nope; nosuchcommand"));
    expect(e.status()).toMatchObject({ exitCode: 127 });
    expect(outputOf(e, "stderr").toString()).toBe("bash: nosuchcommand: command not found\n");
  });
});

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ssh2 from "ssh2";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { SshClients } from "../helpers/ssh.js";
import { toolAvailable } from "../helpers/tools.js";

const haveSsh = toolAvailable("ssh", ["-V"]) && toolAvailable("setsid", ["--version"]);

/** Another ed25519 public key, as a known_hosts line carries it ("ssh-ed25519 AAAA…"). */
function otherHostKey(): string {
  return ssh2.utils.generateKeyPairSync("ed25519").public.split(" ").slice(0, 2).join(" ");
}

// Issue 38: an agent pastes sshCommand into a shell with no terminal and no known_hosts.
describe.skipIf(!haveSsh)("sshCommand pasted as is into a non-interactive shell (OpenSSH, no tty, a fresh HOME)", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  const homes: string[] = [];
  afterEach(() => clients.killAll());
  afterAll(() => {
    clients.cleanup();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  /** A HOME with nothing in it (no ~/.ssh), or with `knownHosts` as ~/.ssh/known_hosts. */
  const freshHome = (knownHosts?: string): string => {
    const home = mkdtempSync(join(tmpdir(), "hotline-paste-"));
    homes.push(home);
    if (knownHosts !== undefined) {
      mkdirSync(join(home, ".ssh"), { mode: 0o700 });
      writeFileSync(join(home, ".ssh", "known_hosts"), knownHosts);
    }
    return home;
  };

  /** `setsid sh -c '<line>' </dev/null`: no controlling terminal, no stdin, POSIX sh, nothing but HOME and PATH. */
  const paste = (line: string, home: string) =>
    clients.run("setsid", ["--wait", "sh", "-c", line], {
      env: { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe"],
    });

  it("runs, pinning the host key with nothing written first, and writes nothing to HOME", async () => {
    const opened = await ctx.client.ok("ssh.open", {});
    expect(opened.sshCommand).toContain("StrictHostKeyChecking=yes");
    const home = freshHome();
    const run = await paste(`${opened.sshCommand} echo pasted`, home);
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: "pasted\n", stderr: "" });
    expect(readdirSync(home)).toEqual([]);
  });

  it("terminal.open's sshCommand runs the same way", async () => {
    const opened = await ctx.client.ok("terminal.open", {});
    const run = await paste(`${opened.sshCommand} echo from-terminal-open`, freshHome());
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: "from-terminal-open\n" });
    await ctx.client.ok("jobs.cancel", { job: opened.job.id });
  });

  it("a stale key for the same address in ~/.ssh/known_hosts (an earlier sandbox) neither breaks it nor is trusted", async () => {
    const opened = await ctx.client.ok("ssh.open", {});
    const stale = `[127.0.0.1]:${opened.sshPort} ${otherHostKey()}\n`;
    const run = await paste(`${opened.sshCommand} echo despite-stale`, freshHome(stale));
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: "despite-stale\n" });
  });

  it("host-key checking stays strict: the command with another key pinned is refused (Host key verification failed)", async () => {
    const opened = await ctx.client.ok("ssh.open", {});
    const pinned = opened.sshKnownHosts.split(" ").slice(1).join(" ");
    const forged = opened.sshCommand.replace(pinned, otherHostKey());
    expect(forged).not.toBe(opened.sshCommand);
    const run = await paste(`${forged} echo should-not-run`, freshHome());
    expect(run.code).toBe(255);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Host key verification failed");
  });
});

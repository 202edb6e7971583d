import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Frame, TestClient } from "./daemon.js";

/** What ssh.open answered, with a known_hosts file holding its host key line. */
export interface SshAccessForTest extends Frame {
  sshCommand: string;
  sshHost: string;
  sshPort: number;
  sshUser: string;
  knownHostsFile: string;
}

/** The result of one client run. */
export interface ClientRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * OpenSSH clients for one test file: a HOME of their own (so nothing reads or writes the real
 * ~/.ssh), options that never prompt, and every child in a process group of its own that
 * `killAll` (afterEach) ends.
 */
export class SshClients {
  readonly home = mkdtempSync(join(tmpdir(), "hotline-ssh-client-"));
  private readonly children = new Set<ChildProcess>();
  private files = 0;

  constructor() {
    mkdirSync(join(this.home, ".ssh"), { mode: 0o700 });
  }

  /** The options every client run gets: no config, no agent, no keys, the pinned host key only. */
  options(access: SshAccessForTest, logLevel = "ERROR"): string[] {
    return [
      "-F",
      "/dev/null",
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${access.knownHostsFile}`,
      "-o",
      "GlobalKnownHostsFile=/dev/null",
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      "IdentityAgent=none",
      "-o",
      `LogLevel=${logLevel}`,
      "-o",
      "ConnectTimeout=30",
    ];
  }

  /** ssh.open, and a known_hosts file with exactly its sshKnownHosts line. */
  async open(client: TestClient, params: Record<string, unknown> = {}): Promise<SshAccessForTest> {
    const access = await client.ok("ssh.open", params);
    if (!access.available) throw new Error(`ssh.open: ${access.reason}`);
    const knownHostsFile = join(this.home, `known_hosts.${this.files++}`);
    writeFileSync(knownHostsFile, `${access.sshKnownHosts}\n`);
    return { ...access, knownHostsFile } as SshAccessForTest;
  }

  /** Starts a client program (ssh, scp, sftp, curl) in a process group of its own. */
  spawn(file: string, args: string[], options: SpawnOptions = {}): ChildProcess {
    const child = spawn(file, args, {
      env: { ...process.env, HOME: this.home, SSH_AUTH_SOCK: "" },
      stdio: ["ignore", "pipe", "pipe"],
      ...options,
      detached: true,
    });
    this.children.add(child);
    child.once("exit", () => this.children.delete(child));
    return child;
  }

  /** Runs a client to its end, with its output. */
  run(file: string, args: string[], options: SpawnOptions & { input?: string | Buffer } = {}): Promise<ClientRun> {
    const { input, ...rest } = options;
    const child = this.spawn(file, args, { ...rest, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    return collect(child, input);
  }

  /** `ssh` as sshCommand says, with the test's options put right after the program name. */
  ssh(
    access: SshAccessForTest,
    extra: string[],
    command?: string,
    options: SpawnOptions & { input?: string | Buffer } = {},
  ): Promise<ClientRun> {
    return this.run("bash", ["-c", pasted(access, [...this.options(access), ...extra], command)], options);
  }

  /** A session that stays open (`cat` echoing what is written to its stdin), once it runs. */
  async openSession(access: SshAccessForTest): Promise<{ child: ChildProcess; stdout: () => string; ended: Promise<ClientRun> }> {
    const child = this.spawn("bash", ["-c", pasted(access, this.options(access), "echo open; exec cat")], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
    const ended = collect(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no session within 30 s; stdout: ${stdout}`)), 30_000);
      child.stdout?.on("data", () => {
        if (!stdout.includes("open\n")) return;
        clearTimeout(timer);
        resolve();
      });
      void ended.then((run) => {
        clearTimeout(timer);
        reject(new Error(`ssh ended (${run.code}) before the session opened: ${run.stderr}`));
      });
    });
    return { child, stdout: () => stdout, ended };
  }

  /** Kills every client still running (their whole groups). */
  killAll(): void {
    for (const child of this.children) {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
    this.children.clear();
  }

  cleanup(): void {
    this.killAll();
    rmSync(this.home, { recursive: true, force: true });
  }
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The sshCommand as a person pastes it, with `options` after `ssh` and `command` at the end. */
export function pasted(access: SshAccessForTest, options: string[], command?: string): string {
  if (!access.sshCommand.startsWith("ssh ")) throw new Error(`sshCommand does not start with "ssh ": ${access.sshCommand}`);
  return `ssh ${options.map(quote).join(" ")} ${access.sshCommand.slice(4)}${command === undefined ? "" : ` ${quote(command)}`}`;
}

/** Collects a child's output until it exits. */
export function collect(child: ChildProcess, input?: string | Buffer): Promise<ClientRun> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  if (input !== undefined) child.stdin?.end(input);
  return new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

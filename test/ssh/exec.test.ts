import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client as SshLibraryClient } from "ssh2";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { newDirs, useDaemon } from "../helpers/daemon.js";
import { SshClients, type SshAccessForTest } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);

/** A prepared workspace as prepare leaves it in the state directory (the index and its env.json), without running Nix. */
function seedPreparedWorkspace(state: string, root: string): string {
  const workspace = join(root, "prepared-ws");
  const entryDir = join(root, "entry");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(entryDir, { recursive: true });
  mkdirSync(join(state, "nix"), { recursive: true });
  writeFileSync(join(entryDir, "env.json"), JSON.stringify({ set: { HOTLINE_TEST_WS: "prepared" }, prepend: {} }));
  const info = { workspace, system: "x86_64-linux", cacheKey: "k", entryDir, preparedAt: new Date().toISOString() };
  writeFileSync(join(state, "nix", "workspaces.json"), JSON.stringify({ version: 1, workspaces: [info] }));
  return workspace;
}

/** A channel of the ssh2 client library: to see what OpenSSH's client does not print (exit-signal). */
function libraryExec(access: SshAccessForTest, command: string, send?: (ch: import("ssh2").ClientChannel) => void) {
  return new Promise<{ code?: number; signal?: string; stdout: string }>((resolve, reject) => {
    const conn = new SshLibraryClient();
    conn.on("error", reject);
    conn.on("ready", () =>
      conn.exec(command, (err, ch) => {
        if (err) return reject(err);
        let stdout = "";
        let exit: { code?: number; signal?: string } = {};
        ch.on("data", (d: Buffer) => {
          stdout += d.toString();
          send?.(ch);
        });
        ch.on("exit", (code: number | null, signal?: string) => {
          exit = code === null ? { signal } : { code };
        });
        ch.on("close", () => {
          conn.end();
          resolve({ ...exit, stdout });
        });
      }),
    );
    conn.connect({ host: access.sshHost, port: access.sshPort, username: access.sshUser, readyTimeout: 30_000 });
  });
}

const dirs = newDirs();
const workspace = seedPreparedWorkspace(dirs.state, dirs.root);

describe.skipIf(!haveSsh)("SSH: commands with the real OpenSSH client", () => {
  const ctx = useDaemon({ dirs });
  const clients = new SshClients();
  afterEach(() => clients.killAll());
  afterAll(() => clients.cleanup());

  it("sshCommand, pasted with the pinned host key, runs `echo hi` (0) and `exit 7` (7)", async () => {
    const access = await clients.open(ctx.client);
    expect(access.sshCommand).toBe(
      `ssh -p ${access.sshPort} -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/dev/null -o 'KnownHostsCommand=/bin/echo ${access.sshKnownHosts}' ${access.sshUser}@${access.sshHost}`,
    );
    expect(access.sshUser).toMatch(/^hlssh_[A-Za-z0-9_-]{43}$/);
    expect(access.sshHostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const hi = await clients.ssh(access, [], "echo hi");
    expect(hi).toMatchObject({ code: 0, stdout: "hi\n" });
    const seven = await clients.ssh(access, [], "exit 7");
    expect(seven.code).toBe(7);
    // The credential is an issued token: listed with label ssh, expiring with the reply.
    const tokens = (await ctx.client.ok("tokens.list")).tokens as Array<Record<string, unknown>>;
    expect(tokens.find((t) => t.id === access.tokenId)).toMatchObject({ label: "ssh", use: "ssh", expiresAt: access.expiresAt });
  });

  it("a host key other than the one pinned in a known_hosts file (ssh-config's way) is refused by the client (StrictHostKeyChecking=yes)", async () => {
    const access = await clients.open(ctx.client);
    const wrong = mkdtempSync(join(clients.home, "kh-"));
    writeFileSync(
      join(wrong, "kh"),
      `${access.sshKnownHosts.split(" ")[0]} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMyQJbgCVg9aSkReDcMm8/gcac8g74M3fhHIBnb3/jwq\n`,
    );
    // The plain command, without sshCommand's own pin (test/ssh/paste.test.ts checks that one).
    const plain = `ssh -p ${access.sshPort} ${access.sshUser}@${access.sshHost}`;
    const run = await clients.ssh({ ...access, sshCommand: plain, knownHostsFile: join(wrong, "kh") }, [], "echo hi");
    expect(run.code).toBe(255);
    expect(run.stdout).toBe("");
  });

  it("exec keeps stdin, stdout and stderr apart, with EOF both ways", async () => {
    const access = await clients.open(ctx.client);
    const run = await clients.ssh(access, [], "tr a-z A-Z; echo to-stderr >&2", { input: "piped input\n" });
    expect(run).toMatchObject({ code: 0, stdout: "PIPED INPUT\n", stderr: "to-stderr\n" });
  });

  it("env requests set LANG and LC_*; other names are refused", async () => {
    const access = await clients.open(ctx.client);
    const run = await clients.ssh(access, ["-o", "SendEnv=LANG LC_TIME FOO_SECRET"], 'echo "$LANG|$LC_TIME|${FOO_SECRET-unset}"', {
      env: { ...process.env, HOME: clients.home, LANG: "C.UTF-8", LC_TIME: "C", FOO_SECRET: "x" },
    });
    expect(run).toMatchObject({ code: 0, stdout: "C.UTF-8|C|unset\n" });
  });

  it("`cd W && cmd` into a prepared workspace gets its environment, as a job there does", async () => {
    const access = await clients.open(ctx.client);
    const inside = await clients.ssh(access, [], `cd ${workspace} && echo "$HOTLINE_TEST_WS $PWD"`);
    expect(inside).toMatchObject({ code: 0, stdout: `prepared ${workspace}\n` });
    const outside = await clients.ssh(access, [], 'echo "${HOTLINE_TEST_WS-none}"');
    expect(outside.stdout).toBe("none\n");
    const job = await ctx.client.ok("shell", { command: "echo $HOTLINE_TEST_WS", cwd: workspace, wait: 30_000 });
    expect(job.output.data).toBe("prepared\n");
  });

  it("a signal request reaches the command, and a command killed by a signal ends with exit-signal", async () => {
    const access = await clients.open(ctx.client);
    const killed = await libraryExec(access, "echo ready; sleep 30", (ch) => ch.signal("TERM"));
    // ssh2's client names the wire's signal ("TERM") as node does.
    expect(killed).toMatchObject({ signal: "SIGTERM", stdout: "ready\n" });
    const self = await libraryExec(access, "kill -KILL $$");
    expect(self.signal).toBe("SIGKILL");
  });

  it("30 concurrent `ssh … true` connections all succeed", async () => {
    const access = await clients.open(ctx.client);
    const runs = await Promise.all(Array.from({ length: 30 }, () => clients.ssh(access, [], "true")));
    expect(runs.map((r) => r.code)).toEqual(Array(30).fill(0));
  });
});

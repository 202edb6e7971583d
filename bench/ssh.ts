import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BenchRow, pairRow, samplePairs, startBenchDaemon } from "./common.js";

/**
 * The SSH server against Debian's OpenSSH sshd, run unprivileged-style (its own config, host key
 * and authorized key, on loopback) in the same run: `ssh … true` (connect, authenticate, exec)
 * and scp of 256 MiB up and down (SFTP mode), by the same OpenSSH client with its defaults.
 */

const run = promisify(execFile);
const SCP_MIB = 256;
const SSHD = "/usr/sbin/sshd";
const SFTP_SERVER = "/usr/lib/openssh/sftp-server";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An sshd of its own on a loopback port, accepting one key; resolves once it listens. */
async function startSshd(dir: string): Promise<{ proc: ChildProcess; port: number; key: string; knownHosts: string }> {
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "host_key")]);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "client_key")]);
  writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_key.pub")));
  const port = await freePort();
  writeFileSync(
    join(dir, "sshd_config"),
    [
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      "PidFile none",
      "UseDNS no",
      `Subsystem sftp ${SFTP_SERVER}`,
    ].join("\n"),
  );
  // As root, sshd insists on its privilege-separation directory (Debian's service creates it).
  if (process.getuid?.() === 0 && !existsSync("/run/sshd")) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const proc = spawn(SSHD, ["-D", "-e", "-f", join(dir, "sshd_config"), "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let log = "";
    proc.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes("Server listening")) resolve();
    });
    proc.once("exit", (code) => reject(new Error(`sshd exited ${code}: ${log}`)));
  });
  const hostKey = readFileSync(join(dir, "host_key.pub"), "utf8").split(" ").slice(0, 2).join(" ");
  return { proc, port, key: join(dir, "client_key"), knownHosts: `[127.0.0.1]:${port} ${hostKey}\n` };
}

export async function sshBenchmarks(options: { execPairs?: number; scpPairs?: number } = {}): Promise<BenchRow[]> {
  if (!existsSync(SSHD)) throw new Error(`${SSHD} is not installed (Debian: openssh-server)`);
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-ssh-"));
  const daemon = await startBenchDaemon({}, ["--ssh-port", "0"]);
  let sshd: Awaited<ReturnType<typeof startSshd>> | undefined;
  try {
    sshd = await startSshd(work);
    const access = (await daemon.client.request("ssh.open", { ttlMs: 3_600_000 })) as {
      available: boolean;
      sshUser: string;
      sshPort: number;
      sshKnownHosts: string;
      reason?: string;
    };
    if (!access.available) throw new Error(`ssh.open: ${access.reason}`);
    writeFileSync(join(work, "known_hosts"), `${access.sshKnownHosts}\n${sshd.knownHosts}`);
    const common = [
      "-F",
      "/dev/null",
      "-o",
      "BatchMode=yes",
      "-o",
      `UserKnownHostsFile=${join(work, "known_hosts")}`,
      "-o",
      "StrictHostKeyChecking=yes",
    ];
    const ours = { port: access.sshPort, user: access.sshUser, id: ["-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none"] };
    const theirs = { port: sshd.port, user: process.env.USER ?? "root", id: ["-o", "IdentitiesOnly=yes", "-i", sshd.key] };
    const env = { ...process.env, HOME: work };
    const ssh = (t: typeof ours) => () => run("ssh", [...common, ...t.id, "-p", String(t.port), `${t.user}@127.0.0.1`, "true"], { env });
    const rows: BenchRow[] = [];
    const exec = await samplePairs(options.execPairs ?? 15, 2, ssh(ours), ssh(theirs));
    rows.push(pairRow("ssh … true (connect + auth + exec) vs sshd", exec, "≤ 1.5× sshd", (r) => r <= 1.5));

    const file = join(work, "payload.bin");
    writeFileSync(file, "");
    for (let i = 0; i < SCP_MIB / 16; i++) writeFileSync(file, randomBytes(16 * 1024 * 1024), { flag: "a" });
    const scp = (t: typeof ours, direction: "up" | "down") => async () => {
      const remote = join(work, `remote-${t.port}.bin`);
      const local = join(work, `back-${t.port}.bin`);
      const target = `${t.user}@127.0.0.1:${remote}`;
      if (direction === "down" && !existsSync(remote)) writeFileSync(remote, readFileSync(file));
      const t0 = performance.now();
      await run("scp", [...common, ...t.id, "-P", String(t.port), ...(direction === "up" ? [file, target] : [target, local])], { env });
      const ms = performance.now() - t0;
      rmSync(direction === "up" ? remote : local, { force: true });
      return ms;
    };
    const pairs = options.scpPairs ?? 3;
    for (const direction of ["up", "down"] as const) {
      rows.push(
        pairRow(
          `scp ${SCP_MIB} MiB ${direction} (SFTP) vs sshd`,
          await samplePairs(pairs, 1, scp(ours, direction), scp(theirs, direction)),
          "≥ 0.7× sshd",
          (r) => r >= 0.7,
          SCP_MIB,
        ),
      );
    }
    return rows;
  } finally {
    sshd?.proc.kill("SIGTERM");
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

import { createHash, createPrivateKey, type KeyObject, sign } from "node:crypto";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { writeFileAtomicSync } from "../util/atomic-write.js";

/** The daemon's SSH identity: the private key ssh2 serves with, and its public half as clients pin it. */
export interface HostKey {
  /** The OpenSSH-format private key (what ssh2's hostKeys takes). */
  privateKey: string;
  /** `ssh-ed25519 AAAA…`: the key as a known_hosts line carries it. */
  publicKey: string;
  /** `SHA256:…`, as `ssh-keygen -lf` and the client's first-connection prompt print it. */
  fingerprint: string;
  /** Signs a key exchange's hash (ed25519) with the key decoded once. */
  sign(data: Buffer): Buffer;
}

/** Where the host key lives: beside the token, in the config directory. */
export const HOST_KEY_FILE = "ssh_host_ed25519_key";

/**
 * Loads `<config>/ssh_host_ed25519_key`, creating it (ed25519, mode 0600, written atomically) on
 * first start; it persists so a client's known_hosts entry stays valid across restarts.
 */
export function loadHostKey(configDir: string): HostKey {
  // Required here, not imported: ssh2 is loaded only by a daemon that serves SSH (README: Start-up).
  const ssh2 = createRequire(import.meta.url)("ssh2") as typeof import("ssh2");
  const path = join(configDir, HOST_KEY_FILE);
  if (!existsSync(path)) {
    // ssh2 generates with node's crypto and writes OpenSSH's format, so no ssh-keygen is needed at runtime.
    const pair = ssh2.utils.generateKeyPairSync("ed25519", { comment: "hotline" });
    writeFileAtomicSync(path, pair.private, { mode: 0o600, fsync: true });
  }
  chmodSync(path, 0o600);
  const privateKey = readFileSync(path, "utf8");
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error) throw new Error(`${path} is not an SSH private key ssh2 can read: ${parsed.message}`);
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  const blob = key.getPublicSSH();
  const signing: KeyObject = createPrivateKey(key.getPrivatePEM());
  return {
    privateKey,
    publicKey: `${key.type} ${blob.toString("base64")}`,
    fingerprint: `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`,
    sign: (data) => sign(null, data, signing),
  };
}

/**
 * Has ssh2 sign key exchanges with the key decoded once. ssh2 keeps the host key as PEM text and
 * hands that to crypto.sign on every handshake, and OpenSSL 3 decodes it each time: 40 % of a
 * handshake's main-thread time (3.4 ms of 5 on a loaded 2-core machine) for a 0.1 ms signature.
 * ssh2 1.17 reads the key from its protocol's `_hostKeys` (shared by every connection) when the
 * exchange needs it; without that field ssh2 signs as before.
 */
export function signWithDecodedKey(connection: object, hostKey: HostKey): void {
  const keys = (connection as { _protocol?: { _hostKeys?: Record<string, { sign?: unknown; type?: string }> } })._protocol?._hostKeys;
  const parsed = keys?.["ssh-ed25519"];
  if (!parsed || parsed.sign === hostKey.sign) return;
  parsed.sign = hostKey.sign;
}

/** The name a client's known_hosts uses for host:port (`[host]:port` unless the port is 22). */
export function knownHostsName(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return port === 22 ? bare : `[${bare}]:${port}`;
}

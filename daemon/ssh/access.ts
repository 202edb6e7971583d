import type { Static } from "@sinclair/typebox";
import { DEFAULT_SSH_TTL_MS, type sshOpen } from "../../protocol/actions/ssh.js";
import type { TokenStore } from "../tokens/store.js";
import { type HostKey, knownHostsName } from "./host-key.js";

/** What ssh.open answers: the credential and how to reach the server, or why there is none. */
export type SshAccessReply = Static<(typeof sshOpen)["result"]>;

/** Whether SSH can be used here, for state.info. */
export interface SshStatus {
  available: boolean;
  host?: string;
  port?: number;
  reason?: string;
}

/** Splits "host:port" / "[v6]:port" (publicSsh was checked by the config). */
function splitHostPort(hostPort: string): { host: string; port: number } {
  const at = hostPort.lastIndexOf(":");
  return { host: hostPort.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(hostPort.slice(at + 1)) };
}

/**
 * The line to paste: OpenSSH (8.5 or later) with the host key pinned on the command line, so it
 * runs where nothing can be asked and nothing was written first (no terminal, no known_hosts: an
 * agent's shell). KnownHostsCommand hands ssh the known_hosts line (it runs the program itself,
 * no shell, so /bin/echo is named in full); checking stays strict, and the user's own known_hosts
 * is neither read (a stale key from an earlier sandbox at the same address counts for nothing)
 * nor written.
 */
export function pastedCommand(host: string, port: number, user: string, knownHostsLine: string): string {
  const p = port === 22 ? "" : `-p ${port} `;
  return `ssh ${p}-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/dev/null -o 'KnownHostsCommand=/bin/echo ${knownHostsLine}' ${user}@${host}`;
}

/** How long ssh.open and terminal.open wait for an SSH server that is still starting. */
const STARTING_WAIT_MS = 10_000;

function waitAtMost(settled: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/**
 * Mints SSH credentials (an `ssh`-use token of the asking token's issuer, label `ssh`) and says
 * where they work: publicSsh when set, else the address the listener bound (a wildcard bind is
 * reached on loopback from this machine).
 */
export class SshAccess {
  private reachable: { host: string; port: number; hostKey: HostKey } | undefined;
  private bound: { host: string; port: number } | undefined;
  private reason = "the SSH server has not started yet";
  /** Settles once the server has started or failed to: the daemon listens for WebSockets first. */
  private readonly started: Promise<void>;
  private settle!: () => void;

  constructor(
    private readonly tokens: TokenStore,
    private readonly publicSsh: string | undefined,
  ) {
    this.started = new Promise<void>((resolve) => (this.settle = resolve));
  }

  /** The listener is up at this address with this key. */
  listening(bound: { host: string; port: number }, hostKey: HostKey): void {
    const host = bound.host === "0.0.0.0" ? "127.0.0.1" : bound.host === "::" ? "::1" : bound.host;
    this.reachable = { ...(this.publicSsh ? splitHostPort(this.publicSsh) : { host, port: bound.port }), hostKey };
    this.bound = bound;
    this.settle();
  }

  /** SSH is off, or its listener failed to start: why, in words a client can act on. */
  unavailable(reason: string): void {
    this.reachable = undefined;
    this.reason = reason;
    this.settle();
  }

  status(): SshStatus {
    if (!this.reachable || !this.bound) return { available: false, reason: this.reason };
    return { available: true, host: this.bound.host, port: this.bound.port };
  }

  /** A new credential expiring after ttlMs (15 minutes unless given), issued on behalf of `issuer`. */
  async issue(issuer: string, ttlMs: number | undefined): Promise<SshAccessReply> {
    // A client that connects the moment the daemon listens asks before the SSH server (loaded on
    // first use) is up: it waits for the start, at most STARTING_WAIT_MS, rather than hear "not yet".
    if (!this.reachable) await waitAtMost(this.started, STARTING_WAIT_MS);
    const at = this.reachable;
    if (!at) return { available: false, reason: this.reason };
    const { token, id, expiresAt } = await this.tokens.create({
      scope: "manage",
      ttlMs: ttlMs ?? DEFAULT_SSH_TTL_MS,
      label: "ssh",
      use: "ssh",
      issuer,
    });
    const knownHosts = `${knownHostsName(at.host, at.port)} ${at.hostKey.publicKey}`;
    return {
      available: true,
      sshCommand: pastedCommand(at.host, at.port, token, knownHosts),
      sshHost: at.host,
      sshPort: at.port,
      sshUser: token,
      sshKnownHosts: knownHosts,
      sshHostKeyFingerprint: at.hostKey.fingerprint,
      expiresAt,
      tokenId: id,
    };
  }
}

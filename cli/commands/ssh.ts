import type { Command } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { parseDuration } from "./core.js";
import { printResult } from "./print.js";

type SshOpened =
  | {
      available: true;
      sshCommand: string;
      sshHost: string;
      sshPort: number;
      sshUser: string;
      sshKnownHosts: string;
      sshHostKeyFingerprint: string;
      expiresAt: string;
      tokenId: string;
    }
  | { available: false; reason: string };

/** Where the ssh-config block pins the host key (the file holds the sshKnownHosts line). */
const KNOWN_HOSTS_FILE = "~/.ssh/hotline_known_hosts";

/** The `~/.ssh/config` block for VS Code Remote-SSH and JetBrains Gateway, with the host key pinned. */
export function sshConfigBlock(opened: Extract<SshOpened, { available: true }>, name: string): string {
  return [
    `# hotline SSH access until ${opened.expiresAt} (${opened.sshHostKeyFingerprint}); put this line in ${KNOWN_HOSTS_FILE}:`,
    `#   ${opened.sshKnownHosts}`,
    `Host ${name}`,
    `  HostName ${opened.sshHost}`,
    `  Port ${opened.sshPort}`,
    `  User ${opened.sshUser}`,
    `  UserKnownHostsFile ${KNOWN_HOSTS_FILE}`,
    "  StrictHostKeyChecking yes",
  ].join("\n");
}

const open = async (ctx: Parameters<Command>[0], defaultTtlMs?: number): Promise<SshOpened> => {
  const ttl = ctx.flags.ttl;
  const ttlMs = typeof ttl === "string" ? parseDuration(ttl) : defaultTtlMs;
  return ctx.client.request<SshOpened>("ssh.open", ttlMs === undefined ? {} : { ttlMs });
};

/** `hotline ssh-command [--ttl 15m]`: a one-line ssh command with a short-lived credential. */
const sshCommand: Command = async (ctx) => {
  const opened = await open(ctx);
  printResult(opened, ctx.json, () => (opened.available ? opened.sshCommand : `no SSH here: ${opened.reason}`));
  return opened.available ? 0 : EXIT.other;
};

/** `hotline ssh-config [--ttl 1h] [--name hotline]`: the ~/.ssh/config block for editors. */
const sshConfig: Command = async (ctx) => {
  const opened = await open(ctx, 60 * 60 * 1000);
  const name = typeof ctx.flags.name === "string" ? ctx.flags.name : "hotline";
  printResult(opened, ctx.json, () => (opened.available ? sshConfigBlock(opened, name) : `no SSH here: ${opened.reason}`));
  return opened.available ? 0 : EXIT.other;
};

export const sshCommands: Record<string, Command> = { "ssh-command": sshCommand, "ssh-config": sshConfig };

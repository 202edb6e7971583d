import { homedir } from "node:os";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { composeJobEnvironment } from "../environment/job-env.js";
import type { EnvironmentResolver } from "../environment/resolver.js";
import { terminalEnvironment } from "../environment/terminal-env.js";
import type { TokenStore } from "../tokens/store.js";
import type { SshAccess } from "./access.js";
import { loadHostKey } from "./host-key.js";
import { findSftpServer, SshServer } from "./server.js";
import type { SessionServices } from "./session.js";

export interface SshStartOptions {
  config: Readonly<Config>;
  tokens: TokenStore;
  log: Logger;
  baseEnv: Record<string, string>;
  resolver: EnvironmentResolver;
  startTerminalJob: SessionServices["startTerminalJob"];
  access: SshAccess;
}

/**
 * Starts the SSH server unless the config turns it off. A server that cannot start (port taken,
 * unreadable host key) leaves the daemon running without SSH, and `access` says why.
 */
export async function startSsh(options: SshStartOptions): Promise<SshServer | undefined> {
  const { config, log, access } = options;
  if (config.ssh === "off") {
    access.unavailable('the SSH server is off in the daemon\'s config (ssh: "off")');
    return undefined;
  }
  const shell = options.baseEnv.SHELL?.startsWith("/") ? options.baseEnv.SHELL : "/bin/bash";
  const session: SessionServices = {
    log,
    home: homedir(),
    shell,
    environment(cwd, own, terminal) {
      const env = composeJobEnvironment(options.baseEnv, options.resolver.resolve(cwd), own);
      return terminal ? terminalEnvironment(env, own) : env;
    },
    startTerminalJob: options.startTerminalJob,
    sftpServer: findSftpServer(),
  };
  if (!session.sftpServer) log.info("ssh: no sftp-server found (openssh-sftp-server); the sftp subsystem is refused");
  try {
    const hostKey = loadHostKey(config.configDir);
    const server = await SshServer.start({
      host: config.sshHost ?? config.host,
      port: config.sshPort,
      hostKey,
      tokens: options.tokens,
      log,
      maxConnections: config.sshMaxConnections,
      maxChannels: config.sshMaxChannels,
      forwardAny: config.sshForwardAny === "on",
      loginGraceMs: config.sshLoginGraceMs,
      session,
    });
    access.listening(server.address, hostKey);
    log.info({ ...server.address, fingerprint: hostKey.fingerprint }, "ssh: listening");
    return server;
  } catch (err) {
    const reason = `the SSH server could not start on ${config.sshHost ?? config.host}:${config.sshPort}: ${(err as Error).message}`;
    access.unavailable(reason);
    log.warn({ err }, reason);
    return undefined;
  }
}

import { accessSync, constants, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { AuthContext, Connection, Server as SshListener } from "ssh2";
import type { TokenStore } from "../tokens/store.js";
import { checkCredential, REFUSAL_DELAY_MS, RefusalLimiter } from "./auth.js";
import { serveDirectTcpip, serveRemoteForwards } from "./forward.js";
import type { HostKey } from "./host-key.js";
import { type SessionServices, serveSession } from "./session.js";

export interface SshServerOptions {
  host: string;
  port: number;
  hostKey: HostKey;
  tokens: TokenStore;
  log: Logger;
  maxConnections: number;
  maxChannels: number;
  /** direct-tcpip to any address, not only loopback. */
  forwardAny: boolean;
  loginGraceMs: number;
  session: SessionServices;
}

/**
 * Ciphers offered: the AES ones node's OpenSSL runs natively. chacha20-poly1305 (OpenSSH's first
 * choice) is left out: without ssh2's optional native addon it runs in JavaScript, several times slower.
 */
const CIPHERS = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr"] as const;

/** Where OpenSSH's sftp-server usually is (Debian, Fedora, Alpine), then beside the ssh in PATH (Nix). */
export function findSftpServer(path = process.env.PATH ?? ""): string | undefined {
  const candidates = [
    "/usr/lib/openssh/sftp-server",
    "/usr/libexec/openssh/sftp-server",
    "/usr/libexec/sftp-server",
    "/usr/lib/ssh/sftp-server",
  ];
  for (const dir of path.split(":").filter(Boolean)) {
    try {
      candidates.push(join(dirname(dirname(realpathSync(join(dir, "ssh")))), "libexec", "sftp-server"));
    } catch {}
  }
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** One authenticated connection: the token it came with, so a revocation finds it. */
interface Client {
  connection: Connection;
  tokenId: string;
}

/**
 * The SSH listener: authenticates the user name as an `ssh` token, then serves sessions and
 * forwards within the connection and channel budgets. Revoking a token ends its connections.
 */
export class SshServer {
  private readonly clients = new Set<Client>();
  private readonly limiter = new RefusalLimiter();

  private constructor(
    private readonly listener: SshListener,
    private readonly options: SshServerOptions,
  ) {}

  /** Listens (ssh2 loads only here: a daemon with SSH off never pays for it); rejects when it cannot bind. */
  static async start(options: SshServerOptions): Promise<SshServer> {
    const { default: ssh2 } = await import("ssh2");
    const listener = new ssh2.Server({
      hostKeys: [options.hostKey.privateKey],
      ident: "hotline",
      algorithms: { cipher: [...CIPHERS] },
    });
    const server = new SshServer(listener, options);
    listener.maxConnections = options.maxConnections;
    listener.on("drop", (data?: { remoteAddress?: string }) =>
      options.log.info({ remote: data?.remoteAddress, max: options.maxConnections }, "ssh: connection refused, the most allowed are open"),
    );
    listener.on("connection", (connection, info) => server.accept(connection, info.ip));
    options.tokens.onRevoke((tokenId) =>
      setImmediate(() => {
        for (const c of server.clients) if (c.tokenId === tokenId) c.connection.end();
      }),
    );
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(options.port, options.host, () => {
        listener.off("error", reject);
        listener.on("error", (err: Error) => options.log.error({ err }, "ssh: listener error"));
        resolve();
      });
    });
    return server;
  }

  /** The bound address (the port is the real one when 0 was asked for). */
  get address(): { host: string; port: number } {
    const a = this.listener.address() as AddressInfo;
    return { host: a.address, port: a.port };
  }

  /** Stops listening and ends every connection (their processes are hung up with their channels). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.listener.close(() => resolve()));
    for (const c of this.clients) c.connection.end();
    await closed;
  }

  private accept(connection: Connection, address: string): void {
    const { log, loginGraceMs } = this.options;
    const grace = setTimeout(() => {
      log.info({ remote: address, graceMs: loginGraceMs }, "ssh: no authentication in time; closing");
      connection.end();
    }, loginGraceMs);
    grace.unref();
    connection.on("error", (err: Error) => log.debug({ err, remote: address }, "ssh: connection error"));
    let client: Client | undefined;
    const refused = new Set<string>();
    connection.on("authentication", (ctx: AuthContext) => {
      const started = Date.now();
      // Constant-time from the outside: every refusal is answered at the same delay after the attempt.
      const refuse = (): void => void setTimeout(() => ctx.reject(["publickey"]), Math.max(0, started + REFUSAL_DELAY_MS - Date.now()));
      if (refused.has(ctx.username)) return refuse(); // the same name again (a client trying its keys): already logged
      const credential = checkCredential(this.options.tokens, this.limiter, ctx.username, address);
      if (!credential.ok) {
        refused.add(ctx.username);
        log.info({ remote: address, method: ctx.method, reason: credential.reason }, "ssh: credential refused");
        return refuse();
      }
      client = { connection, tokenId: credential.tokenId };
      ctx.accept();
    });
    connection.on("ready", () => {
      clearTimeout(grace);
      if (!client) return connection.end();
      this.clients.add(client);
      log.info({ remote: address, tokenId: client.tokenId }, "ssh: connection authenticated");
      this.serve(connection, client, address);
    });
    connection.on("close", () => {
      clearTimeout(grace);
      if (client) this.clients.delete(client);
    });
  }

  private serve(connection: Connection, client: Client, address: string): void {
    const { log, maxChannels } = this.options;
    let open = 0;
    // A slot of the connection's channel budget, or undefined (logged) when none is free.
    const slot = (): (() => void) | undefined => {
      if (open >= maxChannels) {
        log.info(
          { remote: address, tokenId: client.tokenId, maxChannels },
          "ssh: channel refused, the connection has the most allowed open",
        );
        return undefined;
      }
      open++;
      let released = false;
      return () => {
        if (!released) open--;
        released = true;
      };
    };
    connection.on("session", (accept, reject) => {
      const release = slot();
      if (!release) return reject();
      const session = accept();
      session.once("close", release);
      serveSession(session, this.options.session, `token ${client.tokenId}`);
    });
    serveDirectTcpip(connection, { anyHost: this.options.forwardAny, slot, log });
    serveRemoteForwards(connection, { slot, log });
  }
}

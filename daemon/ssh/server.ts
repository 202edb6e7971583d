import { accessSync, constants, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AddressInfo, createServer, type Server as NetServer, type Socket } from "node:net";
import type { Logger } from "pino";
import type { AuthContext, Connection, Server as SshListener } from "ssh2";
import type { TokenStore } from "../tokens/store.js";
import { checkCredential, REFUSAL_DELAY_MS, RefusalLimiter } from "./auth.js";
import { OPEN_FAILURE, rejectWith, serveDirectTcpip, serveRemoteForwards } from "./forward.js";
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

/** How long a disconnected client has to close its side before the socket is destroyed. */
const CLOSE_GRACE_MS = 1000;

/**
 * Ends a connection: SSH's disconnect message, then the socket itself if the peer does not close
 * (a silent client would otherwise hold it half-open).
 */
function cutOff(connection: Connection): void {
  connection.end();
  const socket = socketOf(connection);
  setTimeout(() => socket?.destroy(), CLOSE_GRACE_MS).unref();
}

/** The socket under an ssh2 connection (ssh2 keeps it as `_sock`). */
function socketOf(connection: Connection): Socket | undefined {
  return (connection as unknown as { _sock?: Socket })._sock;
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
  /** Connections open now, authenticated or not. */
  private open = 0;
  /** The login-grace timer of each socket not yet authenticated. */
  private readonly graces = new WeakMap<Socket, NodeJS.Timeout>();

  private constructor(
    private readonly listener: SshListener,
    private readonly tcp: NetServer,
    private readonly options: SshServerOptions,
  ) {}

  /**
   * Listens (ssh2 loads only here: a daemon with SSH off never pays for it); rejects when it cannot
   * bind. Sockets are accepted here and handed to ssh2, so the connection budget and the login
   * grace hold from the first byte (ssh2 announces a connection only once the client has sent its
   * version line; a silent socket would never be announced).
   */
  static async start(options: SshServerOptions): Promise<SshServer> {
    const { default: ssh2 } = await import("ssh2");
    const listener = new ssh2.Server({
      hostKeys: [options.hostKey.privateKey],
      ident: "hotline",
      algorithms: { cipher: [...CIPHERS] },
    });
    const tcp = createServer({ noDelay: true }, (socket) => server.admit(socket));
    const server = new SshServer(listener, tcp, options);
    listener.on("connection", (connection, info) => server.accept(connection, info.ip));
    options.tokens.onRevoke((tokenId) =>
      setImmediate(() => {
        for (const c of server.clients) if (c.tokenId === tokenId) cutOff(c.connection);
      }),
    );
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen(options.port, options.host, () => {
        tcp.off("error", reject);
        tcp.on("error", (err: Error) => options.log.error({ err }, "ssh: listener error"));
        resolve();
      });
    });
    return server;
  }

  /** A new socket: within the connection budget, given sshLoginGraceMs to authenticate, then ssh2's. */
  private admit(socket: Socket): void {
    const { log, maxConnections, loginGraceMs } = this.options;
    socket.on("error", () => {}); // ssh2 reports it on the connection; a socket cut off before that has no one to tell
    if (this.open >= maxConnections) {
      log.info({ remote: socket.remoteAddress, maxConnections }, "ssh: connection refused, the most allowed are open");
      socket.destroy();
      return;
    }
    this.open++;
    const grace = setTimeout(() => {
      log.info({ remote: socket.remoteAddress, graceMs: loginGraceMs }, "ssh: no authentication in time; closing");
      socket.destroy();
    }, loginGraceMs);
    grace.unref();
    this.graces.set(socket, grace);
    socket.once("close", () => {
      this.open--;
      clearTimeout(grace);
    });
    this.listener.injectSocket(socket);
  }

  /** The bound address (the port is the real one when 0 was asked for). */
  get address(): { host: string; port: number } {
    const a = this.tcp.address() as AddressInfo;
    return { host: a.address, port: a.port };
  }

  /** Stops listening and ends every connection (their processes are hung up with their channels). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    for (const c of this.clients) cutOff(c.connection);
    await closed;
  }

  private accept(connection: Connection, address: string): void {
    const { log } = this.options;
    const socket = socketOf(connection);
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
      if (socket) clearTimeout(this.graces.get(socket));
      if (!client) return connection.end();
      this.clients.add(client);
      log.info({ remote: address, tokenId: client.tokenId }, "ssh: connection authenticated");
      this.serve(connection, client, address);
    });
    connection.on("close", () => {
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
      if (!release)
        return rejectWith(
          connection,
          reject,
          OPEN_FAILURE.resourceShortage,
          `the connection has ${maxChannels} channels open, the most allowed`,
        );
      const session = accept();
      session.once("close", release);
      serveSession(session, this.options.session, `token ${client.tokenId}`);
    });
    serveDirectTcpip(connection, { anyHost: this.options.forwardAny, slot, log });
    serveRemoteForwards(connection, { slot, log });
  }
}

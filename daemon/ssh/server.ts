import { accessSync, constants, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AddressInfo, createServer, type Server as NetServer, type Socket } from "node:net";
import type { Logger } from "pino";
import type { AuthContext, Connection, Server as SshListener } from "ssh2";
import type { TokenStore } from "../tokens/store.js";
import { checkCredential, MAX_NAMES_PER_CONNECTION, REFUSAL_DELAY_MS, RefusalLog } from "./auth.js";
import { OPEN_FAILURE, rejectWith, serveDirectTcpip, serveRemoteForwards } from "./forward.js";
import { type HostKey, signWithDecodedKey } from "./host-key.js";
import { Outflow } from "./outflow.js";
import { HandshakePacer, sourceOf } from "./pacer.js";
import { type SessionServices, serveSession } from "./session.js";
import { UnauthenticatedSockets } from "./unauthenticated.js";
import { dropConnection, WireWork } from "./wire.js";

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

/**
 * Key exchanges offered: only elliptic-curve ones, whose arithmetic is a fraction of a millisecond.
 * ssh2's default list also offers finite-field groups up to 8192 bits: a stranger choosing group18
 * cost the daemon 30-50 ms of main thread per handshake, before any credential (a whole handshake
 * is now about 3 ms on a loaded 2-core machine, most of it the system calls). OpenSSH (which VS
 * Code Remote-SSH runs) picks curve25519 first; JetBrains' client (sshj) and every client that
 * accepts the ed25519 host key (our only one) speak curve25519 too; ecdh-sha2-nistp256 is there
 * for clients that must use NIST curves.
 */
const KEX = ["curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256"] as const;

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
  private readonly refusals = new RefusalLog();
  private readonly pacer = new HandshakePacer();
  /** Sockets not authenticated yet: at most sshMaxConnections of them, the oldest closed past that. */
  private readonly unauthenticated: UnauthenticatedSockets;
  /** The login-grace timer and the watchdog's view of each socket not yet authenticated. */
  private readonly graces = new WeakMap<Socket, NodeJS.Timeout>();
  private readonly wires = new WeakMap<Socket, WireWork>();

  private constructor(
    private readonly listener: SshListener,
    private readonly tcp: NetServer,
    private readonly options: SshServerOptions,
  ) {
    this.unauthenticated = new UnauthenticatedSockets(options.maxConnections, (socket) =>
      options.log.info(
        { remote: socket.remoteAddress, max: options.maxConnections },
        "ssh: the oldest unauthenticated connection closed, the most allowed are open",
      ),
    );
  }

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
      algorithms: { cipher: [...CIPHERS], kex: [...KEX] },
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

  /**
   * A new socket: refused when sshMaxConnections authenticated connections are open; else it
   * counts among the unauthenticated ones (the oldest of which is closed past the budget), has
   * sshLoginGraceMs to authenticate, and is handed to ssh2 in its source's turn (HandshakePacer):
   * until then nothing of it is read, so a stranger's handshakes cost the daemon nothing ahead of their turn.
   */
  private admit(socket: Socket): void {
    const { log, maxConnections, loginGraceMs } = this.options;
    socket.on("error", () => {}); // ssh2 reports it on the connection; a socket cut off before that has no one to tell
    const remote = socket.remoteAddress ?? "";
    if (this.clients.size >= maxConnections) {
      log.info({ remote, maxConnections }, "ssh: connection refused, the most allowed are open");
      socket.destroy();
      return;
    }
    this.unauthenticated.add(socket);
    const grace = setTimeout(() => {
      log.info({ remote, graceMs: loginGraceMs }, "ssh: no authentication in time; closing");
      socket.destroy();
    }, loginGraceMs);
    grace.unref();
    this.graces.set(socket, grace);
    this.wires.set(socket, new WireWork(socket, `${remote}:${socket.remotePort}`));
    const withdraw = this.pacer.admit(remote, () => {
      if (!socket.destroyed) this.listener.injectSocket(socket);
    });
    socket.once("close", () => {
      clearTimeout(grace);
      withdraw();
    });
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
    const { log, maxConnections } = this.options;
    const socket = socketOf(connection);
    signWithDecodedKey(connection, this.options.hostKey);
    // Every error ssh2 reports ends the connection; stop reading at the first, as ssh2 does not (see dropConnection).
    connection.on("error", (err: Error & { level?: string }) => {
      if (err.level === "socket") log.debug({ err, remote: address }, "ssh: connection error");
      else log.info({ remote: address, error: err.message }, "ssh: protocol error; connection dropped");
      if (socket) dropConnection(socket);
    });
    let client: Client | undefined;
    // A second key exchange before authentication is a stranger making the daemon work: no client needs one.
    connection.on("rekey", () => {
      if (client || !socket) return;
      log.info({ remote: address }, "ssh: key exchange repeated before authentication; connection dropped");
      dropConnection(socket);
    });
    const refused = new Set<string>();
    connection.on("authentication", (ctx: AuthContext) => {
      const started = Date.now();
      // Constant-time from the outside: every refusal is answered at the same delay after the attempt.
      const refuse = (): void => void setTimeout(() => ctx.reject(["publickey"]), Math.max(0, started + REFUSAL_DELAY_MS - Date.now()));
      if (refused.has(ctx.username)) return refuse(); // the same name again (a client trying its keys): already counted
      const credential = checkCredential(this.options.tokens, ctx.username);
      if (!credential.ok) {
        refused.add(ctx.username);
        this.noteRefusal(address, ctx.method, credential.reason);
        if (refused.size > MAX_NAMES_PER_CONNECTION && socket) {
          log.info({ remote: address, names: refused.size }, "ssh: too many wrong user names on one connection; closing");
          return dropConnection(socket);
        }
        return refuse();
      }
      client = { connection, tokenId: credential.tokenId };
      ctx.accept();
    });
    connection.on("ready", () => {
      if (socket) clearTimeout(this.graces.get(socket));
      if (!client) return connection.end();
      if (this.clients.size >= maxConnections) {
        log.info({ remote: address, maxConnections }, "ssh: connection refused, the most allowed are open");
        return cutOff(connection);
      }
      if (socket) {
        this.unauthenticated.authenticated(socket);
        this.wires.get(socket)?.authenticate();
      }
      this.clients.add(client);
      log.info({ remote: address, tokenId: client.tokenId }, "ssh: connection authenticated");
      this.serve(connection, client, address, socket);
    });
    connection.on("close", () => {
      if (client) this.clients.delete(client);
    });
  }

  /** Logs a refused credential (never the name itself), one line each up to the source's allowance a minute. */
  private noteRefusal(address: string, method: string, reason: string): void {
    const note = this.refusals.failed(sourceOf(address));
    if (note === "log") this.options.log.info({ remote: address, method, reason }, "ssh: credential refused");
    else if (note === "first-unlogged")
      this.options.log.info({ remote: address }, "ssh: more credentials refused from this address; not logged one by one for a minute");
  }

  private serve(connection: Connection, client: Client, address: string, socket: Socket | undefined): void {
    const { log, maxChannels } = this.options;
    // ssh2 keeps its socket as _sock; without it no output could be bounded.
    if (!socket) return void connection.end();
    const outflow = new Outflow(socket);
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
      serveSession(session, this.options.session, `token ${client.tokenId}`, outflow);
    });
    serveDirectTcpip(connection, { anyHost: this.options.forwardAny, slot, log, outflow });
    serveRemoteForwards(connection, { slot, log, outflow });
  }
}

import { lookup } from "node:dns/promises";
import { isIP, connect, createServer, type Server, type Socket } from "node:net";
import type { Logger } from "pino";
import type { Connection, ServerChannel, TcpipBindInfo, TcpipRequestInfo } from "ssh2";

/** How long a forwarded connection may take to connect before the channel is refused. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Remote forwards (ssh -R) one connection may hold at once. */
export const MAX_REMOTE_FORWARDS = 16;

/** Whether an address is a loopback one (127/8, ::1, ::ffff:127/104). */
export function isLoopback(address: string): boolean {
  const a = address.replace(/^\[(.*)\]$/, "$1");
  return /^127\./.test(a) || a === "::1" || /^::ffff:127\./i.test(a);
}

/** A channel slot from the connection's budget: false when none is free. */
export type ChannelSlot = () => (() => void) | undefined;

/** Pipes a socket and a channel into each other (each side's backpressure holds the other) and ends both together. */
function join(socket: Socket, channel: ServerChannel, release: () => void): void {
  let done = false;
  const end = (): void => {
    if (done) return;
    done = true;
    release();
    socket.destroy();
    channel.close();
  };
  socket.pipe(channel).on("error", end);
  channel.pipe(socket);
  socket.on("error", end).on("close", end);
  channel.on("error", end).on("close", end);
}

/** Where a direct-tcpip channel may go: its address, resolved, or why it may not. */
async function destination(host: string, anyHost: boolean): Promise<{ address: string } | { refused: string }> {
  const literal = host.replace(/^\[(.*)\]$/, "$1");
  // A name is resolved here and the socket goes to the address checked, so a name cannot point elsewhere later.
  const addresses = isIP(literal) ? [literal] : (await lookup(literal, { all: true })).map((a) => a.address);
  if (addresses.length === 0) return { refused: `${host} does not resolve` };
  if (!anyHost && !addresses.every(isLoopback)) return { refused: `${host} is not a loopback address (sshForwardAny is off)` };
  return { address: addresses[0]! };
}

/**
 * `direct-tcpip` (ssh -L, ssh -D): a connection from the daemon to the address the client names,
 * loopback only unless `anyHost`; the channel opens only once that connection has.
 */
export function serveDirectTcpip(client: Connection, options: { anyHost: boolean; slot: ChannelSlot; log: Logger }): void {
  client.on("tcpip", (accept, reject, info: TcpipRequestInfo) => {
    const release = options.slot();
    if (!release) return reject();
    destination(info.destIP, options.anyHost).then(
      (dest) => {
        if ("refused" in dest) {
          options.log.info({ dest: `${info.destIP}:${info.destPort}`, why: dest.refused }, "ssh: forward refused");
          release();
          return reject();
        }
        const socket = connect({ host: dest.address, port: info.destPort, timeout: CONNECT_TIMEOUT_MS });
        const fail = (): void => {
          socket.destroy();
          release();
          reject();
        };
        socket.once("error", fail).once("timeout", fail);
        socket.once("connect", () => {
          socket.off("error", fail).off("timeout", fail);
          socket.setTimeout(0);
          join(socket, accept(), release);
        });
      },
      () => {
        release();
        reject();
      },
    );
  });
}

/**
 * `tcpip-forward` (ssh -R): a listener on a loopback address whose connections the client is told
 * of as `forwarded-tcpip` channels; closed on `cancel-tcpip-forward` or with the connection.
 */
export function serveRemoteForwards(client: Connection, options: { slot: ChannelSlot; log: Logger }): void {
  const listeners = new Map<string, Server>();
  const key = (info: TcpipBindInfo, port: number): string => `${info.bindAddr}:${port}`;
  client.on("request", (accept, reject, name, info: TcpipBindInfo) => {
    if (name === "cancel-tcpip-forward") {
      const server = listeners.get(key(info, info.bindPort));
      listeners.delete(key(info, info.bindPort));
      server?.close();
      return server ? accept?.() : reject?.();
    }
    if (name !== "tcpip-forward") return reject?.();
    const host = info.bindAddr === "" || info.bindAddr === "localhost" ? "127.0.0.1" : info.bindAddr;
    if (!isLoopback(host) || listeners.size >= MAX_REMOTE_FORWARDS) {
      options.log.info({ bind: `${info.bindAddr}:${info.bindPort}` }, "ssh: remote forward refused (loopback only, at most 16)");
      return reject?.();
    }
    const server = createServer((socket) => {
      const release = options.slot();
      if (!release) return socket.destroy();
      socket.pause();
      client.forwardOut(info.bindAddr, port(), socket.remoteAddress ?? "127.0.0.1", socket.remotePort ?? 0, (err, channel) => {
        if (err) {
          release();
          return socket.destroy();
        }
        join(socket, channel, release);
        socket.resume();
      });
    });
    const port = (): number => {
      const a = server.address();
      return typeof a === "object" && a ? a.port : info.bindPort;
    };
    server.on("error", () => reject?.()); // refused while binding; later errors end only that listener

    server.listen({ host, port: info.bindPort }, () => {
      listeners.set(key(info, port()), server);
      accept?.(port());
    });
  });
  client.on("close", () => {
    for (const server of listeners.values()) server.close();
    listeners.clear();
  });
}

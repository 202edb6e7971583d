import { lookup } from "node:dns/promises";
import { isIP, connect, createServer, type Server, type Socket } from "node:net";
import type { Logger } from "pino";
import type { Connection, ServerChannel, TcpipBindInfo, TcpipRequestInfo } from "ssh2";
import type { Outflow } from "./outflow.js";

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

/** SSH_MSG_CHANNEL_OPEN_FAILURE reason codes (RFC 4254 §5.1): OpenSSH prints their names. */
export const OPEN_FAILURE = { prohibited: 1, connectFailed: 2, resourceShortage: 4 } as const;

/**
 * Refuses a channel open with a reason the client shows: OpenSSH prints "channel N: open failed:
 * connect failed: <description>". ssh2's reject() always sends an empty description and picks the
 * code itself, so its one call to the protocol's channelOpenFail is given ours (ssh2 1.17 keeps the
 * protocol as `_protocol`); without that method it falls back to the plain reject.
 */
export function rejectWith(client: Connection, reject: () => void, code: number, description: string): void {
  const protocol = (client as unknown as { _protocol?: { channelOpenFail?: (remote: number, reason: number, desc: string) => void } })
    ._protocol;
  const original = protocol?.channelOpenFail;
  if (!protocol || typeof original !== "function") return reject();
  protocol.channelOpenFail = (remote: number) => original.call(protocol, remote, code, description);
  try {
    reject();
  } finally {
    protocol.channelOpenFail = original;
  }
}

/** Why a connection from the daemon to `where` failed, as the client is told. */
function connectFailure(err: NodeJS.ErrnoException | undefined, where: string): string {
  if (err === undefined) return `no answer from ${where} within ${CONNECT_TIMEOUT_MS / 1000} s`;
  const what: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
    ECONNRESET: "connection reset",
    ETIMEDOUT: "timed out",
    EADDRNOTAVAIL: "address not available",
  };
  return `${(err.code && what[err.code]) ?? err.code ?? err.message} on ${where}`;
}

/** Pipes a socket and a channel into each other (each side's backpressure holds the other) and ends both together. */
function join(socket: Socket, channel: ServerChannel, release: () => void, outflow: Outflow): void {
  let done = false;
  const end = (): void => {
    if (done) return;
    done = true;
    release();
    socket.destroy();
    channel.close();
  };
  outflow.pipe(socket, channel, { end: true });
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
export function serveDirectTcpip(
  client: Connection,
  options: { anyHost: boolean; slot: ChannelSlot; log: Logger; outflow: Outflow },
): void {
  client.on("tcpip", (accept, reject, info: TcpipRequestInfo) => {
    const release = options.slot();
    if (!release)
      return rejectWith(
        client,
        reject,
        OPEN_FAILURE.resourceShortage,
        "the connection has the most channels allowed open (sshMaxChannels)",
      );
    destination(info.destIP, options.anyHost).then(
      (dest) => {
        if ("refused" in dest) {
          options.log.info({ dest: `${info.destIP}:${info.destPort}`, why: dest.refused }, "ssh: forward refused");
          release();
          return rejectWith(client, reject, OPEN_FAILURE.prohibited, dest.refused);
        }
        const where = `${dest.address.includes(":") ? `[${dest.address}]` : dest.address}:${info.destPort}`;
        const socket = connect({ host: dest.address, port: info.destPort, timeout: CONNECT_TIMEOUT_MS });
        const fail = (err?: NodeJS.ErrnoException): void => {
          socket.destroy();
          release();
          const why = connectFailure(err, where);
          options.log.info({ dest: where, why }, "ssh: forward failed");
          rejectWith(client, reject, OPEN_FAILURE.connectFailed, why);
        };
        const timedOut = (): void => fail();
        socket.once("error", fail).once("timeout", timedOut);
        socket.once("connect", () => {
          socket.off("error", fail).off("timeout", timedOut);
          socket.setTimeout(0);
          join(socket, accept(), release, options.outflow);
        });
      },
      (err: NodeJS.ErrnoException) => {
        release();
        rejectWith(client, reject, OPEN_FAILURE.connectFailed, `${info.destIP} does not resolve (${err.code ?? err.message})`);
      },
    );
  });
}

/**
 * `tcpip-forward` (ssh -R): a listener on a loopback address whose connections the client is told
 * of as `forwarded-tcpip` channels; closed on `cancel-tcpip-forward` or with the connection.
 */
export function serveRemoteForwards(client: Connection, options: { slot: ChannelSlot; log: Logger; outflow: Outflow }): void {
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
        join(socket, channel, release, options.outflow);
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

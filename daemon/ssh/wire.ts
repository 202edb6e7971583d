import type { Socket } from "node:net";
import { type Work, work } from "../watchdog/work.js";

/** How long a dropped connection has for what was already written before its socket is destroyed. */
const DROP_GRACE_MS = 1000;

/**
 * Drops a connection at once: nothing more is read, so nothing more reaches ssh2's parser. ssh2
 * throws at a bad packet length but keeps the length and goes on reading, and the next chunk
 * would allocate it (2 GiB a connection); it only ends its side. What was written may still go
 * out before the socket is destroyed.
 */
export function dropConnection(socket: Socket): void {
  socket.pause();
  if (!socket.writableEnded) socket.end();
  setTimeout(() => socket.destroy(), DROP_GRACE_MS).unref();
}

/**
 * The main thread's work for one SSH socket, as the watchdog sees it: "ssh handshake" is in flight
 * until the connection authenticates, and the parsing of every chunk read (key exchange,
 * decryption, authentication) is timed, "ssh handshake" then "ssh connection", so a late turn is
 * blamed on it rather than on whatever else was in flight. ssh2 parses in its own 'data' listener;
 * ours goes first and a tick queued there runs right after the last listener of that read. The
 * socket is corked meanwhile, so what ssh2 answers to one read (a key exchange is three or four
 * packets, each its own write) goes out in one system call.
 */
export class WireWork {
  private unit: Work;
  private startedAt: number | undefined;
  private authenticated = false;

  constructor(
    private readonly socket: Socket,
    conn: string,
  ) {
    this.unit = work.begin("ssh handshake", conn);
    // prependListener is EventEmitter's: unlike on("data") it never sets the socket flowing before ssh2 reads it.
    socket.prependListener("data", this.read);
    socket.once("close", () => work.end(this.unit));
  }

  /** The connection has authenticated: its parsing is timed as "ssh connection" from now on. */
  authenticate(): void {
    if (this.authenticated) return;
    this.authenticated = true;
    work.end(this.unit);
    this.unit = { label: "ssh connection", conn: this.unit.conn };
  }

  private readonly read = (): void => {
    if (this.startedAt !== undefined) return;
    this.startedAt = performance.now();
    this.socket.cork();
    process.nextTick(this.parsed);
  };

  private readonly parsed = (): void => {
    this.socket.uncork();
    work.spent(this.unit, performance.now() - this.startedAt!);
    this.startedAt = undefined;
    // ssh2 ends its side of a connection it gave up on (an error before the version line, which no
    // listener of ours sees) but reads on: stop reading.
    if (!this.authenticated && this.socket.writableEnded && !this.socket.destroyed) dropConnection(this.socket);
  };
}

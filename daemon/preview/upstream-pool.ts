import { connect, type Socket } from "node:net";
import { noteShortLivedBytes } from "../util/young-gc.js";

/** What one read of an app's socket takes at most. */
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * An idle keep-alive socket to an app is closed after this (before the app's own timeout, Node's
 * default 5 s, so a reuse rarely races it). It is also the tick of a busy socket's idle clock.
 */
const FREE_SOCKET_MS = 4000;

/** Who a socket's events go to while it carries an exchange. */
export interface UpstreamUser {
  data(chunk: Buffer): void;
  end(): void;
  close(): void;
  error(err: NodeJS.ErrnoException): void;
  drain(): void;
  /** The socket has carried nothing for `quietMs` in all. */
  quiet(quietMs: number): void;
}

/**
 * A socket to an app with its listeners set once: its events go to its current user, and while
 * it has none (idle in the pool) anything but silence drops it — data then is an answer nobody
 * asked for, and the socket cannot be trusted again.
 */
export class UpstreamSocket {
  readonly socket: Socket;
  user: UpstreamUser | undefined;
  /**
   * The user wrote the last chunk on, and the write is still queued (it holds the bytes): the next
   * read goes to a new buffer. Otherwise every read of the socket reuses one buffer.
   */
  retained = false;
  private buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
  /** It has carried a request before (then a failure before any answer may be retried). */
  reused = false;
  /** FREE_SOCKET_MS periods without a byte in either direction, since the last byte read or written. */
  quietTicks = 0;

  constructor(
    address: string,
    port: number,
    private readonly dropIdle: (up: UpstreamSocket) => void,
  ) {
    // Reads land in the socket's own buffer, handed to the user to write on at once (no buffer
    // allocated per read, none for the collector to find): the user copies what it keeps.
    const socket = connect({
      host: address,
      port,
      noDelay: true,
      onread: { buffer: () => this.nextBuffer(), callback: (bytes, buffer) => this.read(buffer.subarray(0, bytes) as Buffer) },
    });
    this.socket = socket;
    socket.setTimeout(FREE_SOCKET_MS);
    socket.resume(); // so the end of the stream is emitted, though no data event is
    socket.on("end", () => (this.user ? this.user.end() : this.dropIdle(this)));
    socket.on("close", () => (this.user ? this.user.close() : this.dropIdle(this)));
    // Every failure also closes the socket; a user hears of it first.
    socket.on("error", (err: NodeJS.ErrnoException) => this.user?.error(err));
    socket.on("drain", () => this.user?.drain());
    socket.on("timeout", () => {
      if (!this.user) return this.dropIdle(this);
      // A fired socket timeout waits for activity to run again: re-armed for the next tick.
      socket.setTimeout(FREE_SOCKET_MS);
      this.user.quiet(++this.quietTicks * FREE_SOCKET_MS);
    });
  }

  private read(chunk: Buffer): boolean {
    this.quietTicks = 0;
    if (!this.user) {
      this.dropIdle(this);
      return false;
    }
    this.user.data(chunk);
    return !this.paused;
  }

  /** Set by pause/resume: a read callback returning false stops reading until resume. */
  private paused = false;

  pause(): void {
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    this.paused = false;
    this.socket.resume();
  }

  private nextBuffer(): Buffer {
    if (this.retained) {
      this.retained = false;
      this.buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
      noteShortLivedBytes(READ_BUFFER_BYTES);
    }
    return this.buffer;
  }
}

interface Pool {
  total: number;
  idle: UpstreamSocket[];
  waiting: Array<(up: UpstreamSocket) => void>;
}

/** A request waiting for a socket to come free; `cancel` takes it out of the line (its client went away). */
export interface UpstreamWait {
  socket: Promise<UpstreamSocket>;
  cancel(): void;
}

/**
 * Keep-alive connections to the apps, at most `perPort` to one address; a request beyond waits for
 * one to come free (their number is bounded by the proxy's request budget).
 */
export class UpstreamPool {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly perPort: number) {}

  private pool(key: string): Pool {
    let pool = this.pools.get(key);
    if (!pool) {
      pool = { total: 0, idle: [], waiting: [] };
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** A socket to `address:port`: an idle one (most recent first; none when `fresh`), a new one, or the next to come free. */
  acquire(address: string, port: number, fresh = false): UpstreamWait | UpstreamSocket {
    const pool = this.pool(`${address}:${port}`);
    if (fresh) for (const up of pool.idle.splice(0)) up.socket.destroy();
    const idle = pool.idle.pop();
    if (idle) {
      idle.reused = true;
      idle.quietTicks = 0;
      return idle;
    }
    if (pool.total < this.perPort) return this.open(pool, address, port);
    let waiter!: (up: UpstreamSocket) => void;
    const socket = new Promise<UpstreamSocket>((resolve) => {
      waiter = resolve;
      pool.waiting.push(resolve);
    });
    return {
      socket,
      cancel: () => {
        const at = pool.waiting.indexOf(waiter);
        if (at >= 0) pool.waiting.splice(at, 1);
      },
    };
  }

  private open(pool: Pool, address: string, port: number): UpstreamSocket {
    pool.total++;
    const up = new UpstreamSocket(address, port, (idle) => this.drop(pool, idle));
    up.socket.once("close", () => {
      pool.total--;
      const waiter = pool.waiting.shift();
      if (waiter) return waiter(this.open(pool, address, port));
      if (!pool.total) this.pools.delete(`${address}:${port}`);
    });
    return up;
  }

  private drop(pool: Pool, up: UpstreamSocket): void {
    const at = pool.idle.indexOf(up);
    if (at >= 0) pool.idle.splice(at, 1);
    up.socket.destroy();
  }

  /** A socket whose exchange ended cleanly: to the next waiter, or idle until FREE_SOCKET_MS. */
  release(up: UpstreamSocket, address: string, port: number): void {
    up.user = undefined;
    const pool = this.pools.get(`${address}:${port}`);
    if (!pool || up.socket.destroyed) return void up.socket.destroy();
    up.resume();
    const waiter = pool.waiting.shift();
    if (waiter) {
      up.reused = true;
      return waiter(up);
    }
    pool.idle.push(up);
  }

  /** Closes every idle socket; busy ones end with their exchange. */
  close(): void {
    for (const pool of this.pools.values()) for (const up of pool.idle.splice(0)) up.socket.destroy();
  }
}

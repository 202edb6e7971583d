import type { OutputStream } from "../protocol/common.js";
import type { Connection } from "./connection.js";
import { HotlineError } from "./errors.js";
import type { FollowEvent } from "./frames.js";

export interface FollowOptions {
  /** Log offset to start at (default 0). */
  from?: number;
  /** Only this stream's bytes (offsets stay those of the whole log). */
  stream?: OutputStream;
  /** false: the daemon sends output as JSON text events (whole UTF-8 characters per chunk); the bytes arrive the same. */
  binary?: boolean;
}

/** How a follow survives dropped sockets: consecutive reconnects without progress, and the first back-off. */
export interface ReconnectPolicy {
  attempts: number;
  delayMs: number;
}

/** What a follow needs from its client: a connection of its own (and a place to hand it back), and a place to keep its timer. */
export interface FollowHost {
  openConnection(): Promise<Connection>;
  /** Takes back the connection of a follow that ended with job.exit, for the next follow. */
  releaseConnection(connection: Connection): void;
  readonly reconnect: ReconnectPolicy;
  track(follow: FollowStream): () => void;
}

/** Bytes buffered for a slow consumer before the socket is paused (the daemon then reads from disk). */
const HIGH_WATER = 8 * 1024 * 1024;
const LOW_WATER = 2 * 1024 * 1024;

/**
 * `job.follow()`: the job's events as an async iterator, on a connection of its own with binary
 * output frames. When the socket drops it reconnects and follows again from the offset after the
 * last byte it received, so the consumer sees every byte exactly once and in order; it ends after
 * `job.exit`. A slow consumer pauses the socket instead of growing memory.
 *
 * After `job.exit` the daemon follows nothing more on the connection, so it goes back to the
 * client for the next follow (opening one costs an upgrade with auth and a cold TCP window). A
 * follow that stops early, fails or loses its socket closes its connection instead: the daemon
 * may still be sending on it.
 */
export class FollowStream implements AsyncIterableIterator<FollowEvent> {
  private cursor: number;
  private readonly queue: FollowEvent[] = [];
  private queuedBytes = 0;
  private waiter: { resolve: (r: IteratorResult<FollowEvent>) => void; reject: (e: unknown) => void } | undefined;
  private connection: Connection | undefined;
  /** Removes this follow's listeners from its connection. */
  private detach: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failedAttempts = 0;
  private exited = false;
  private stopped = false;
  private error: unknown;
  private readonly untrack: () => void;

  constructor(
    private readonly host: FollowHost,
    readonly job: string,
    private readonly options: FollowOptions = {},
  ) {
    this.cursor = options.from ?? 0;
    this.untrack = host.track(this);
    void this.attach();
  }

  /** The log offset after the last output byte delivered: where a new follow would resume. */
  get offset(): number {
    return this.cursor;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<FollowEvent>> {
    const event = this.queue.shift();
    if (event) {
      if (event.event === "job.output") this.queuedBytes -= event.bytes.length;
      if (this.queuedBytes <= LOW_WATER) this.connection?.resume();
      return Promise.resolve({ value: event, done: false });
    }
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.stopped || this.exited) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** `break` out of a for-await loop lands here: the follow stops and its connection closes. */
  async return(): Promise<IteratorResult<FollowEvent>> {
    await this.stop();
    return { value: undefined, done: true };
  }

  /** Stops following: closes the connection (unless job.exit already handed it back) and clears any reconnect timer. */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
      this.finish();
    }
    await this.connection?.close();
  }

  private async attach(): Promise<void> {
    let connection: Connection;
    try {
      connection = await this.host.openConnection();
    } catch (err) {
      return this.dropped(err);
    }
    if (this.stopped) return this.host.releaseConnection(connection); // nothing was asked on it yet
    this.connection = connection;
    const offEvent = connection.onEvent((event) => this.onEvent(event));
    const offClose = connection.onClose((reason) => {
      if (!this.exited && !this.stopped)
        this.dropped(new HotlineError("unavailable", `the connection closed while following ${this.job} (${reason})`));
    });
    this.detach = () => {
      offEvent();
      offClose();
    };
    const params = {
      job: this.job,
      from: this.cursor,
      binary: this.options.binary ?? true,
      ...(this.options.stream ? { stream: this.options.stream } : {}),
    };
    connection.request("jobs.follow", params).catch((err: unknown) => {
      if (!connection.closed) this.fail(err); // a refusal (not_found …); a dropped socket is handled by onClose
    });
  }

  private onEvent(event: FollowEvent): void {
    if (event.job !== this.job || this.stopped) return;
    if (event.event === "job.output") {
      const end = event.offset + event.bytes.length;
      if (end <= this.cursor) return; // already delivered before a reconnect
      const bytes = event.offset < this.cursor ? event.bytes.subarray(this.cursor - event.offset) : event.bytes;
      this.cursor = end;
      this.failedAttempts = 0;
      this.push({ ...event, offset: end - bytes.length, bytes });
      if (this.queuedBytes > HIGH_WATER) this.connection?.pause();
      return;
    }
    if (event.event === "job.exit") {
      this.exited = true;
      this.push(event);
      this.finish();
      this.release();
      return;
    }
    this.push(event);
  }

  private push(event: FollowEvent): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: event, done: false });
      return;
    }
    this.queue.push(event);
    if (event.event === "job.output") this.queuedBytes += event.bytes.length;
  }

  /** Hands the connection back to the client: the daemon's follower on it ended with job.exit. */
  private release(): void {
    const connection = this.connection;
    if (!connection) return;
    this.connection = undefined; // stop() and next() must not touch it once another follow may own it
    this.detach?.();
    this.detach = undefined;
    this.host.releaseConnection(connection);
  }

  private dropped(cause: unknown): void {
    if (this.stopped || this.exited) return;
    this.connection = undefined;
    this.failedAttempts++;
    const { attempts, delayMs } = this.host.reconnect;
    if (this.failedAttempts > attempts) {
      const message = `gave up following ${this.job} after ${attempts} reconnects without progress; resume with from: ${this.cursor}`;
      return this.fail(new HotlineError("unavailable", message, { details: { job: this.job, from: this.cursor }, cause }));
    }
    // The first reconnect is immediate (a dropped socket is the common case); then back off.
    const delay = this.failedAttempts === 1 ? 0 : delayMs * 2 ** (this.failedAttempts - 2);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.attach();
    }, delay);
  }

  private fail(error: unknown): void {
    if (this.stopped || this.exited || this.error !== undefined) return;
    this.error = error;
    void this.connection?.close();
    if (this.waiter) {
      const { reject } = this.waiter;
      this.waiter = undefined;
      reject(error);
    }
    this.finish();
  }

  /** Ends the iteration for a waiting consumer and lets go of the timer and the client's registry. */
  private finish(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.untrack();
    if (this.waiter && this.error === undefined) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: undefined, done: true });
    }
  }
}

import { write, writeSync } from "node:fs";

/** Log bytes waiting for the descriptor; past this, new lines are dropped (and counted). */
const MAX_QUEUED = 4 * 1024 * 1024;
const RETRY_MS = 20;
/** A synchronous flush gives up after this many busy retries: shutdown must not wait on a reader. */
const FLUSH_SYNC_ATTEMPTS = 50;

/**
 * A pino destination for a descriptor (stderr) that can never hold the daemon up: writes are
 * asynchronous with a bounded queue, a full queue drops lines, and any error but "busy" (EPIPE
 * when the reader has gone, EBADF …) turns the sink off for good. pino's own destination retries
 * a failed synchronous flush forever, which is how a broken stderr pipe made SIGTERM hang.
 */
export class LogSink {
  private queue: string[] = [];
  private queued = 0;
  private writing = false;
  private broken = false;
  dropped = 0;

  constructor(private readonly fd: number) {}

  write(line: string): boolean {
    if (this.broken) return true;
    if (this.queued + line.length > MAX_QUEUED) {
      this.dropped++;
      return true;
    }
    this.queue.push(line);
    this.queued += line.length;
    if (!this.writing) this.pump();
    return true;
  }

  /** Writes what is queued now, synchronously, with a bounded number of retries (exit path). */
  flushSync(): void {
    let pending = Buffer.from(this.take(), "utf8");
    for (let attempt = 0; pending.length > 0 && !this.broken && attempt < FLUSH_SYNC_ATTEMPTS; attempt++) {
      try {
        pending = pending.subarray(writeSync(this.fd, pending));
      } catch (err) {
        if (!isBusy(err)) this.broken = true;
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
      }
    }
  }

  /** pino's `logger.flush(cb)`: calls back once the queue is written, or at once when it cannot be. */
  flush(callback: (err?: Error) => void = () => {}): void {
    if (this.broken || (!this.writing && this.queue.length === 0)) return callback();
    const check = (): void =>
      this.broken || (!this.writing && this.queue.length === 0) ? callback() : void setTimeout(check, RETRY_MS).unref();
    check();
  }

  private take(): string {
    const text = this.queue.join("");
    this.queue = [];
    this.queued = 0;
    return text;
  }

  private pump(): void {
    if (this.broken || this.queue.length === 0) {
      this.writing = false;
      return;
    }
    this.writing = true;
    this.send(Buffer.from(this.take(), "utf8"));
  }

  private send(bytes: Buffer): void {
    write(this.fd, bytes, 0, bytes.length, null, (err, written) => {
      if (err) {
        if (!isBusy(err)) {
          this.broken = true;
          this.queue = [];
          this.queued = 0;
          this.writing = false;
          return;
        }
        setTimeout(() => this.send(bytes), RETRY_MS).unref();
        return;
      }
      if (written < bytes.length) return this.send(bytes.subarray(written));
      this.pump();
    });
  }
}

function isBusy(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EAGAIN" || code === "EBUSY";
}

import { connect, type Socket } from "node:net";

/**
 * A plain-http GET whose body the socket reads straight into large buffers, for download bodies.
 * Through undici every 64 KiB socket read is copied into its parser's memory and passed through a
 * web-style stream: on two cores that doubled a 1 GiB download's CPU. Here the kernel fills 4 MiB
 * buffers in reads as large as it has data for (`onread`), and the consumer gets views of them.
 * Only the simple case is taken: a response with a Content-Length and no Transfer-Encoding
 * (anything else answers `undefined` and the caller asks undici instead); one request per
 * connection (`Connection: close`).
 */

/** The response head (with any 1xx heads before it) must end within this many bytes (undici's limit is 16 KiB). */
const HEAD_LIMIT = 64 * 1024;
/** Size of each buffer the socket reads into. */
const BUFFER_BYTES = 1024 * 1024;
/** Received bytes not yet taken by the consumer past which the socket stops reading. */
const MAX_AHEAD_BYTES = 8 * 1024 * 1024;
/** A connection silent this long fails, as undici's headers and body timeouts do. */
const IDLE_TIMEOUT_MS = 300_000;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export interface LeanResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: LeanBody;
}

/** Whether `leanGet` can send this request: plain http, no credentials in the URL, well-formed header names and values. */
export function leanRequestable(url: URL, headers: Record<string, string>): boolean {
  if (url.protocol !== "http:" || url.username || url.password) return false;
  return Object.entries(headers).every(([name, value]) => HEADER_NAME.test(name) && HEADER_VALUE.test(value));
}

/**
 * Sends the GET and reads the response head. Resolves undefined when the response is not one the
 * lean body reads (its connection is closed); rejects with the socket's error before the head.
 */
export function leanGet(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<LeanResponse | undefined> {
  signal.throwIfAborted();
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const body = new LeanBody();
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(headers))
    if (name.toLowerCase() !== "host" && name.toLowerCase() !== "connection") lines.push(`${name}: ${value}`);
  lines.push("connection: close", "", "");
  return body.open(host, Number(url.port || 80), lines.join("\r\n"), signal);
}

/**
 * A response body as large views of the buffers the socket reads into. Iterate it once; `dump`
 * and `destroy` end it early. A connection that closes before Content-Length bytes fails the
 * iteration after every byte received was handed out (so a resume starts where it ended).
 */
export class LeanBody implements AsyncIterable<Buffer> {
  private socket: Socket | undefined;
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  /** Bytes of `buffer` in use; `from` is where the bytes not yet queued begin. */
  private used = 0;
  private from = 0;
  private inHead = true;
  private bodyLeft = 0;
  private readonly ready: Buffer[] = [];
  private readyBytes = 0;
  private paused = false;
  private failure: Error | undefined;
  private done = false;
  private wake: (() => void) | undefined;
  private onHead: ((res: LeanResponse | undefined) => void) | undefined;
  private onHeadError: ((err: Error) => void) | undefined;
  private unlisten: (() => void) | undefined;
  private readonly listeners: Array<(err: Error) => void> = [];

  open(host: string, port: number, request: string, signal: AbortSignal): Promise<LeanResponse | undefined> {
    return new Promise((resolve, reject) => {
      this.onHead = resolve;
      this.onHeadError = reject;
      const socket = connect({
        host,
        port,
        onread: { buffer: () => this.nextView(), callback: (n: number) => this.received(n) },
      });
      this.socket = socket;
      const abort = (): void => this.fail((signal.reason as Error | undefined) ?? new Error("aborted"));
      signal.addEventListener("abort", abort, { once: true });
      this.unlisten = () => signal.removeEventListener("abort", abort);
      socket.setTimeout(IDLE_TIMEOUT_MS, () => this.fail(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)));
      socket.on("error", (err) => this.fail(err));
      socket.on("close", () => {
        if (!this.done) this.fail(new Error(this.inHead ? "the server closed the connection before answering" : "other side closed"));
      });
      socket.write(request);
    });
  }

  on(event: "error", listener: (err: Error) => void): this {
    if (event === "error") this.listeners.push(listener);
    return this;
  }

  /** Discards the rest of the body (closes the connection). */
  async dump(): Promise<void> {
    this.finish();
  }

  destroy(): void {
    this.finish();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      const chunk = this.ready.shift();
      if (chunk) {
        this.readyBytes -= chunk.length;
        if (this.paused && this.readyBytes <= MAX_AHEAD_BYTES / 2) {
          this.paused = false;
          this.socket?.resume();
        }
        yield chunk;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.done) return;
      // Hand over what the current buffer holds rather than wait for it to fill (a slow network).
      if (this.used > this.from) {
        this.queue();
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Where the next read goes: the free part of the buffer, no further than the body's end. */
  private nextView(): Buffer {
    if (this.used === this.buffer.length) {
      this.queue();
      this.buffer = Buffer.allocUnsafe(BUFFER_BYTES);
      this.used = 0;
      this.from = 0;
    }
    const room = this.buffer.length - this.used;
    return this.buffer.subarray(this.used, this.used + (this.inHead ? room : Math.min(room, this.bodyLeft)));
  }

  private received(n: number): boolean {
    if (this.done || this.failure) return false;
    const before = this.used;
    this.used += n;
    if (this.inHead) {
      this.parseHead(before);
      if (this.inHead || this.done) return !this.done;
    } else {
      this.bodyLeft -= n;
    }
    if (this.bodyLeft <= 0) {
      this.queue();
      this.finish();
      return false;
    }
    if (this.wake) this.queue();
    if (this.readyBytes + (this.used - this.from) > MAX_AHEAD_BYTES) {
      this.paused = true;
      return false;
    }
    return true;
  }

  /** Parses the head once it is complete (skipping 1xx heads); the body starts right after it. */
  private parseHead(before: number): void {
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n", Math.max(this.from, before - 3), "latin1");
      // Counted from the connection's first byte, interim heads included: the first buffer never fills in the head.
      if (end < 0 ? this.used >= HEAD_LIMIT : end > HEAD_LIMIT)
        return this.fail(new Error(`the response head is larger than ${HEAD_LIMIT} bytes`));
      if (end < 0) return;
      const text = this.buffer.toString("latin1", this.from, end);
      this.from = end + 4;
      const [status, ...fields] = text.split("\r\n");
      const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(status ?? "");
      if (!m) return this.fail(new Error(`not an HTTP/1.1 response: ${JSON.stringify((status ?? "").slice(0, 80))}`));
      const statusCode = Number(m[1]);
      if (statusCode < 200) continue;
      const headers: Record<string, string | string[]> = {};
      for (const field of fields) {
        const colon = field.indexOf(":");
        if (colon <= 0) return this.fail(new Error(`malformed response header ${JSON.stringify(field.slice(0, 80))}`));
        const name = field.slice(0, colon).trim().toLowerCase();
        const value = field.slice(colon + 1).trim();
        const had = headers[name];
        headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
      }
      this.inHead = false;
      const length = headers["content-length"];
      if (headers["transfer-encoding"] !== undefined || typeof length !== "string" || !/^\d{1,15}$/.test(length)) {
        this.finish();
        this.settleHead(undefined);
        return;
      }
      this.bodyLeft = Number(length) - (this.used - this.from);
      if (this.bodyLeft < 0) this.used += this.bodyLeft; // bytes past the body are not part of it
      this.settleHead({ statusCode, headers, body: this });
      return;
    }
  }

  private settleHead(res: LeanResponse | undefined): void {
    const resolve = this.onHead;
    this.onHead = this.onHeadError = undefined;
    resolve?.(res);
  }

  /** Moves the bytes not yet queued to the consumer's queue. */
  private queue(): void {
    if (this.used > this.from) {
      const chunk = this.buffer.subarray(this.from, this.used);
      this.ready.push(chunk);
      this.readyBytes += chunk.length;
      this.from = this.used;
    }
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.unlisten?.();
    this.socket?.destroy();
    this.wakeUp();
  }

  private fail(err: Error): void {
    if (this.done || this.failure) return;
    // What arrived before the failure is handed out first, so a resume starts after it.
    if (!this.inHead && this.used > this.from) {
      this.ready.push(this.buffer.subarray(this.from, this.used));
      this.from = this.used;
    }
    this.failure = err;
    this.unlisten?.();
    this.socket?.destroy();
    const reject = this.onHeadError;
    this.onHead = this.onHeadError = undefined;
    if (reject) reject(err);
    else for (const listener of this.listeners) listener(err);
    this.wakeUp();
  }
}

import type { Socket } from "node:net";
import { noteShortLivedBytes } from "../util/young-gc.js";
import type { ForwardTarget } from "./forward.js";
import { responseHead } from "./forward.js";
import { type BodyEnd, responseBodyEnd } from "./http1/body.js";
import { HeadError, hasToken, headEnd, parseResponseHead } from "./http1/head.js";
import { failedPage, type PreviewPage, waitingPage } from "./pages.js";
import type { UpstreamPool, UpstreamSocket, UpstreamUser } from "./upstream-pool.js";

/** What an exchange needs from its connection: where to answer, and what to do when it ends. */
export interface ExchangeOwner {
  readonly client: Socket;
  readonly pool: UpstreamPool;
  readonly maxResponseHead: number;
  readonly idleMs: number;
  /** Answers with one of the daemon's pages (nothing of the app's was sent yet). */
  page(page: PreviewPage, close: boolean): void;
  /** Where the port is reached (127.0.0.1, ::1 …), or undefined while nothing listens on it. */
  address(port: number): Promise<string | undefined> | string | undefined;
  /** The port's address stopped working (refused): look it up again next time. */
  forget(port: number): void;
  /** The exchange is over; `close` ends the client's connection, else its next request is read. */
  done(close: boolean): void;
  /** The exchange failed by a fault of the daemon's: logged, and the client's connection ends. */
  crashed(err: unknown): void;
}

/** One request as it goes to the app. */
export interface Outgoing {
  method: string;
  head: string;
  /** The request's body bytes read with its head. */
  body: Buffer;
  bodyEnd: BodyEnd;
  /** The request body ended within `body`. */
  bodyDone: boolean;
  /** The client asked to close after this (HTTP/1.0, Connection: close). */
  closeAfter: boolean;
  /** A request that may be sent again on a fresh socket when a reused one fails before answering. */
  retryable: boolean;
  target: ForwardTarget;
}

const countShortLived = (chunk: Buffer): void => noteShortLivedBytes(chunk.length);

/**
 * One request and its answer on raw sockets: the request's head (rewritten) and body go to the
 * app as they arrive, the answer's head (rewritten) and body come back as they arrive, each side
 * paused while the other cannot take more. Only heads are parsed; bodies are scanned for their
 * end, so a keep-alive socket on either side goes on exactly where the next message starts.
 */
export class Exchange implements UpstreamUser {
  private up: UpstreamSocket | undefined;
  private address: string | undefined;
  /** Leaves the line for a socket to the app, while waiting in it. */
  private cancelWait: (() => void) | undefined;
  /** Body bytes read before the app's socket was there (the client is paused meanwhile). */
  private readonly early: Buffer[];
  private reused = false;
  private responseHeadBytes: Buffer | undefined;
  private responseEnd: BodyEnd | undefined;
  private answered = false;
  private finished = false;
  private closeClient: boolean;
  private reusable = true;
  /** The client's socket is full: the app's is paused until it drains. */
  private draining = false;

  constructor(
    private readonly owner: ExchangeOwner,
    private readonly out: Outgoing,
  ) {
    this.closeClient = out.closeAfter;
    this.early = out.body.length ? [out.body] : [];
  }

  /** Finds the app and a socket to it (at once when both are known, the common case), then sends the request. */
  start(fresh = false): void {
    if (this.address !== undefined) return this.connect(fresh);
    const lookup = this.owner.address(this.out.target.port);
    if (typeof lookup !== "object") return this.found(lookup, fresh);
    lookup.then(
      (address) => this.found(address, fresh),
      (err: unknown) => this.crash(err),
    );
  }

  private found(address: string | undefined, fresh: boolean): void {
    if (this.finished) return;
    if (address === undefined) {
      this.finished = true;
      return this.owner.page(waitingPage(this.out.target.port), !this.out.bodyDone || this.closeClient);
    }
    this.address = address;
    this.connect(fresh);
  }

  private connect(fresh: boolean): void {
    const got = this.owner.pool.acquire(this.address!, this.out.target.port, fresh);
    if (!("cancel" in got)) return this.send(got);
    this.cancelWait = got.cancel;
    got.socket.then(
      (up) => {
        this.cancelWait = undefined;
        this.send(up);
      },
      (err: unknown) => this.crash(err),
    );
  }

  private send(up: UpstreamSocket): void {
    if (this.finished || this.owner.client.destroyed) return this.owner.pool.release(up, this.address!, this.out.target.port);
    this.up = up;
    this.reused = up.reused;
    up.user = this;
    const s = up.socket;
    s.cork();
    s.write(this.out.head, "latin1");
    for (const chunk of this.early.splice(0)) s.write(chunk);
    s.uncork();
    if (!this.out.bodyDone) this.owner.client.resume();
  }

  /** A fault of the daemon's own: this request's client loses its connection, nothing else does. */
  private crash(err: unknown): void {
    this.owner.crashed(err);
    this.abort();
  }

  private detach(): UpstreamSocket | undefined {
    const up = this.up;
    this.up = undefined;
    return up;
  }

  /** More of the request's body from the client; returns what follows the body (the next request), if it ended. */
  clientData(chunk: Buffer): Buffer | undefined {
    countShortLived(chunk);
    const end = this.out.bodyEnd.scan(chunk, 0);
    const body = end < 0 ? chunk : chunk.subarray(0, end);
    if (end >= 0) this.out.bodyDone = true;
    const up = this.up;
    if (!up) {
      if (body.length) this.early.push(body);
      this.owner.client.pause();
    } else if (body.length) {
      up.quietTicks = 0;
      if (!up.socket.write(body)) this.owner.client.pause();
    }
    return end < 0 ? undefined : chunk.subarray(end);
  }

  /** The app's port this request goes to. */
  get port(): number {
    return this.out.target.port;
  }

  get requestDone(): boolean {
    return this.out.bodyDone;
  }

  /** The client went away or was cut off: the app's side of it ends too. */
  abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.cancelWait?.();
    const up = this.detach();
    if (up) {
      up.user = undefined;
      up.socket.destroy();
    }
  }

  drain(): void {
    if (!this.out.bodyDone) this.owner.client.resume();
  }

  private readonly onClientDrain = (): void => {
    this.draining = false;
    this.up?.resume();
  };

  quiet(quietMs: number): void {
    if (quietMs >= this.owner.idleMs) this.fail(`no data for ${this.owner.idleMs} ms`, "ETIMEDOUT");
  }

  error(err: NodeJS.ErrnoException): void {
    this.fail(err.code ?? err.message, err.code);
  }

  close(): void {
    this.fail("the connection closed");
  }

  end(): void {
    // A body that runs until the app closes has ended; any other end is the app failing mid-answer.
    if (this.responseEnd?.kind === "close") return this.finish();
    this.fail("the connection closed");
  }

  /** A read of the app's socket: in its reused buffer, so what is kept past this call is copied. */
  data(chunk: Buffer): void {
    const up = this.up!;
    try {
      if (this.responseEnd) this.forwardBody(chunk, 0);
      else this.readHead(chunk);
    } catch (err) {
      this.fail(err instanceof HeadError ? err.message : String(err));
    }
    // A write still queued holds the chunk's bytes: the socket's next read needs a new buffer.
    if (this.owner.client.writableLength > 0) up.retained = true;
  }

  private readHead(chunk: Buffer): void {
    const before = this.responseHeadBytes?.length ?? 0;
    const buf = this.responseHeadBytes ? Buffer.concat([this.responseHeadBytes, chunk]) : chunk;
    const end = headEnd(buf, before);
    if (end < 0) {
      if (buf.length > this.owner.maxResponseHead)
        throw new HeadError(502, `the app's response head passed ${this.owner.maxResponseHead} bytes`);
      this.responseHeadBytes = buf;
      return;
    }
    this.responseHeadBytes = undefined;
    const head = parseResponseHead(buf.toString("latin1", 0, end));
    if (head.status === 101) throw new HeadError(502, "the app switched protocols on a request that did not ask to");
    const interim = head.status < 200;
    const responseEnd = interim ? undefined : responseBodyEnd(head, this.out.method);
    // Both framings (RFC 9112 §6.3): Transfer-Encoding wins, the length is not passed on, and a
    // socket whose app framed an answer two ways is not trusted with another request.
    const framedTwice = head.transferEncoding !== undefined && head.contentLength !== undefined;
    if (framedTwice) this.reusable = false;
    if (responseEnd) {
      this.responseEnd = responseEnd;
      // The answer comes while the request is still being sent: neither connection can be trusted to line up after it.
      if (!this.out.bodyDone || responseEnd.kind === "close") this.closeClient = true;
      if (!this.out.bodyDone || responseEnd.kind === "close" || head.minor === 0 || hasToken(head.connection, "close"))
        this.reusable = false;
    }
    this.answered = true;
    const text = responseHead(head, this.out.target, !interim && this.closeClient);
    const client = this.owner.client;
    client.cork();
    client.write(text, "latin1");
    if (interim) {
      client.uncork();
      if (end < buf.length) this.readHead(buf.subarray(end));
      return;
    }
    this.forwardBody(buf, end);
    client.uncork();
  }

  private forwardBody(chunk: Buffer, from: number): void {
    const end = this.responseEnd!.scan(chunk, from);
    const last = end < 0 ? chunk.length : end;
    const client = this.owner.client;
    if (last > from && !client.write(from === 0 && last === chunk.length ? chunk : chunk.subarray(from, last)) && !this.draining) {
      this.draining = true;
      this.up?.pause();
      client.once("drain", this.onClientDrain);
    }
    if (end < 0) return;
    if (end < chunk.length) this.reusable = false; // bytes past the answer: the app's side is out of step
    this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.owner.client.off("drain", this.onClientDrain);
    const up = this.detach();
    if (up) {
      if (this.reusable && this.out.bodyDone) this.owner.pool.release(up, this.address!, this.out.target.port);
      else {
        up.user = undefined;
        up.socket.destroy();
      }
    }
    this.owner.done(this.closeClient);
  }

  private fail(why: string, code?: string): void {
    if (this.finished) return;
    if (this.answered) {
      // Part of the answer went out: the client sees it cut short.
      this.abort();
      this.owner.client.destroy();
      return;
    }
    const port = this.out.target.port;
    const up = this.detach();
    if (up) {
      up.user = undefined;
      up.socket.destroy();
    }
    // A reused keep-alive socket the app had just closed: the same request once more on a fresh one.
    if (this.reused && this.out.retryable && code !== "ETIMEDOUT") {
      this.reused = false;
      this.out.retryable = false;
      return this.start(true);
    }
    this.finished = true;
    if (code === "ECONNREFUSED") {
      this.owner.forget(port);
      this.owner.page(waitingPage(port), !this.out.bodyDone || this.closeClient);
    } else this.owner.page(failedPage(port, why), !this.out.bodyDone || this.closeClient);
  }
}

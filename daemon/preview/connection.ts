import { maxHeaderSize } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { GateMemo } from "./access.js";
import type { Exchange, ExchangeOwner } from "./exchange.js";
import { HeadError, headEnd, parseRequestHead, type RequestHead } from "./http1/head.js";
import { malformedResponse, pageResponse, type PreviewPage } from "./pages.js";
import type { UpstreamPool } from "./upstream-pool.js";

/**
 * A client quiet this long between requests is closed (Node's own keep-alive default); one that
 * began a request head and sent nothing more for twice this too. During an exchange the app's
 * socket keeps the time (a stalled client stalls it too), so one socket timeout, never re-armed,
 * serves every phase.
 */
const KEEP_ALIVE_MS = 5000;
const HEAD_TICKS = 2;

/** What a connection hands its requests to: the proxy decides each one, and may take the socket (an upgrade). */
export interface RequestHandler {
  readonly pool: UpstreamPool;
  readonly maxResponseHead: number;
  readonly idleMs: number;
  readonly log: Logger;
  /** Starts the request's exchange, answers it with a page, or takes the socket; `rest` is what followed the head. */
  handle(conn: PreviewConnection, head: RequestHead, rest: Buffer): void;
  /** The connection waits for its next request (an unauthorised socket again, for the daemon's budget). */
  idle(client: Socket): void;
  /** An exchange `run` started for `port` has ended (answered, failed or its client gone). */
  ended(port: number): void;
  address(port: number): Promise<string | undefined> | string | undefined;
  forget(port: number): void;
}

type Phase = "head" | "exchange" | "gone";

/**
 * One client connection to a preview host: request heads read strictly, one exchange at a time
 * (a pipelined request waits, its bytes kept and the socket paused until the answer before it is
 * done), keep-alive between them.
 */
export class PreviewConnection implements ExchangeOwner {
  private phase: Phase = "head";
  private pending: Buffer | undefined;
  private exchange: Exchange | undefined;
  /** The current request's method and Accept (for the daemon's own pages). */
  private method = "GET";
  private accept: string | undefined;
  private headTicks = 0;
  private clientEnded = false;
  readonly pool: UpstreamPool;
  readonly maxResponseHead: number;
  readonly idleMs: number;
  /** The last token this connection was let in with (see PreviewGate). */
  readonly gateMemo: GateMemo = {};

  constructor(
    readonly client: Socket,
    private readonly handler: RequestHandler,
    first: Buffer,
  ) {
    this.pool = handler.pool;
    this.maxResponseHead = handler.maxResponseHead;
    this.idleMs = handler.idleMs;
    client.setNoDelay(true);
    client.on("data", this.onData);
    client.on("error", () => client.destroy());
    client.on("close", this.onClose);
    // The client sent all it will (a half-close): its current answer still goes out, then the connection ends.
    client.on("end", () => {
      this.clientEnded = true;
      if (this.phase === "head") this.client.destroySoon();
    });
    client.on("timeout", this.onTimeout);
    client.setTimeout(KEEP_ALIVE_MS);
    this.onData(first);
  }

  /** Takes the socket away from the connection (an upgrade becomes a tunnel); what it had read is returned. */
  release(): void {
    this.phase = "gone";
    this.client.off("data", this.onData);
    this.client.off("close", this.onClose);
    this.client.off("timeout", this.onTimeout);
    this.client.setTimeout(0);
  }

  /** Runs an exchange for the current request; the client's further bytes are its body. */
  run(exchange: Exchange): void {
    this.exchange = exchange;
    this.phase = "exchange";
    try {
      exchange.start();
    } catch (err) {
      this.crashed(err);
    }
  }

  crashed(err: unknown): void {
    this.handler.log.error({ err }, "preview request failed");
    this.client.destroy();
  }

  /** One of the daemon's own pages for the current request (HTML or JSON by its Accept). */
  page(page: PreviewPage, close: boolean, rest?: Buffer): void {
    this.answer(pageResponse(page, this.accept, this.method, close), close, rest);
  }

  address(port: number): Promise<string | undefined> | string | undefined {
    return this.handler.address(port);
  }

  forget(port: number): void {
    this.handler.forget(port);
  }

  /** Bytes that followed the current request (its body's end, then the next request's start). */
  keepNext(rest: Buffer): void {
    this.keep(rest);
  }

  /** The exchange is over: close, or read the next request (perhaps already here). */
  done(close: boolean): void {
    this.endExchange();
    if (this.phase === "gone") return;
    if (close || this.clientEnded) {
      this.phase = "gone";
      // Ended, and destroyed once written: a client still sending gets no further reading.
      this.client.destroySoon();
      return;
    }
    this.phase = "head";
    this.handler.idle(this.client);
    // A client that does not take its answers gets no more of them: its next request waits, unread
    // (the daemon's own pages are written whole; an app's answer is paced by the client already).
    if (this.client.writableNeedDrain) {
      this.client.pause();
      this.client.once("drain", this.readNext);
      return;
    }
    this.readNext();
  }

  /** Reads the next request: the one already here (pipelined), or what the client sends next. */
  private readonly readNext = (): void => {
    if (this.phase !== "head") return;
    if (!this.pending) {
      if (this.client.isPaused()) this.client.resume();
      return;
    }
    // A pipelined request: read on the next turn, so a flood of them never deepens the stack.
    setImmediate(() => {
      const pending = this.pending;
      this.pending = undefined;
      if (this.phase !== "head") return;
      this.client.resume();
      if (pending?.length) this.onData(pending);
    });
  };

  /** Writes a whole answer of the daemon's own and goes on as `done(close)` would; `rest` followed the request. */
  answer(text: string, close: boolean, rest?: Buffer): void {
    this.client.write(text, "latin1");
    if (!close && rest?.length) this.keep(rest);
    this.done(close);
  }

  private endExchange(): void {
    const exchange = this.exchange;
    if (!exchange) return;
    this.exchange = undefined;
    this.handler.ended(exchange.port);
  }

  private readonly onTimeout = (): void => {
    // A fired socket timeout waits for activity to run again: re-armed here for the next tick.
    if (this.phase === "exchange" || (this.phase === "head" && this.pending && ++this.headTicks < HEAD_TICKS))
      return void this.client.setTimeout(KEEP_ALIVE_MS);
    this.client.destroy();
  };

  private readonly onClose = (): void => {
    this.phase = "gone";
    this.exchange?.abort();
    this.endExchange();
  };

  private readonly onData = (chunk: Buffer): void => {
    try {
      if (this.phase === "exchange") {
        const exchange = this.exchange!;
        if (exchange.requestDone) return this.keep(chunk);
        const rest = exchange.clientData(chunk);
        if (rest) this.keep(rest);
        return;
      }
      if (this.phase === "head") this.readHead(chunk);
    } catch (err) {
      // A bad request (or a fault of the daemon's) costs this connection, never the daemon. A body
      // that breaks its framing mid-exchange may already have an answer under way: cut off then.
      const answerable = err instanceof HeadError && this.phase === "head";
      if (!(err instanceof HeadError)) this.handler.log.error({ err }, "preview connection failed");
      this.phase = "gone";
      this.exchange?.abort();
      this.endExchange();
      if (answerable) this.client.end(malformedResponse(err.status, err.message), "latin1");
      else this.client.destroy();
    }
  };

  /** Bytes of the next request while one is answered: kept, and the socket paused until its turn. */
  private keep(chunk: Buffer): void {
    if (!chunk.length) return;
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.client.pause();
  }

  private readHead(chunk: Buffer): void {
    const before = this.pending?.length ?? 0;
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const end = headEnd(buf, before);
    if (end < 0) {
      if (buf.length > maxHeaderSize) throw new HeadError(431, `the request head passed ${maxHeaderSize} bytes`);
      this.pending = buf;
      this.headTicks = 0;
      return;
    }
    this.pending = undefined;
    if (end > maxHeaderSize) throw new HeadError(431, `the request head passed ${maxHeaderSize} bytes`);
    const head = parseRequestHead(buf.toString("latin1", 0, end));
    this.method = head.method;
    this.accept = head.accept;
    this.handler.handle(this, head, buf.subarray(end));
  }
}

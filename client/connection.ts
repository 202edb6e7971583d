import WebSocket from "ws";
import type { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Endpoint } from "./discovery.js";
import { HotlineError } from "./errors.js";
import { parseFrame, type FollowEvent, type Reply, type WireFrame } from "./frames.js";

/** A daemon that accepts TCP but never answers the upgrade is reported instead of waited on forever. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

type Pending = { action: string; resolve: (reply: Reply) => void; reject: (error: HotlineError) => void };

/** Reads the JSON error the daemon sends with a refused upgrade (401/403); `details` keep the HTTP status and body. */
function refusal(url: string, res: IncomingMessage): Promise<HotlineError> {
  return new Promise((resolve) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      if (body.length < 65536) body += chunk;
    });
    res.on("close", () => {
      try {
        const { error } = JSON.parse(body) as { error: { code: "unauthorized" | "forbidden"; message: string } };
        resolve(
          new HotlineError(error.code, `${error.message} (HTTP ${res.statusCode} from ${url})`, {
            details: { httpStatus: res.statusCode, body },
          }),
        );
      } catch {
        resolve(
          new HotlineError("unavailable", `${url} refused the WebSocket upgrade: HTTP ${res.statusCode}`, {
            details: { httpStatus: res.statusCode, body },
          }),
        );
      }
    });
  });
}

/**
 * One WebSocket to a daemon: requests matched to replies by id (many in flight), events handed to
 * listeners. When the socket closes every pending request rejects with `unavailable`; a connection
 * is never reopened — the client opens a new one.
 */
export class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly eventListeners = new Set<(event: FollowEvent) => void>();
  private readonly frameListeners = new Set<(frame: WireFrame) => void>();
  private readonly closeListeners = new Set<(reason: string) => void>();
  private closing: Promise<void> | undefined;
  closed = false;

  private constructor(
    private readonly ws: WebSocket,
    readonly url: string,
  ) {
    ws.on("message", (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on("error", () => {
      // 'close' follows every socket error; the reason is reported there.
    });
    ws.once("close", (code: number, reason: Buffer) => this.handleClose(`code ${code}${reason.length ? `, ${reason.toString()}` : ""}`));
  }

  /**
   * Opens and authenticates; refusals and unreachable daemons become HotlineErrors naming the URL
   * (and daemon.json). Without a token no Authorization header is sent (tests of the daemon's refusals).
   */
  static open(
    endpoint: Omit<Endpoint, "token"> & { token?: string },
    headers: Record<string, string> = {},
    timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
  ): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(endpoint.url, {
        headers: endpoint.token === undefined ? headers : { ...headers, authorization: `Bearer ${endpoint.token}` },
        perMessageDeflate: false,
        handshakeTimeout: timeoutMs,
      });
      const fail = (error: HotlineError): void => {
        ws.removeAllListeners();
        ws.on("error", () => {});
        ws.terminate();
        reject(error);
      };
      ws.once("open", () => {
        ws.removeAllListeners();
        resolve(new Connection(ws, endpoint.url));
      });
      ws.once("unexpected-response", (_req, res) => void refusal(endpoint.url, res).then(fail));
      ws.once("error", (err) => {
        const from = endpoint.daemonFile ? ` (from ${endpoint.daemonFile}; is the daemon running? start one with: hotline daemon)` : "";
        fail(new HotlineError("unavailable", `cannot reach the daemon at ${endpoint.url}${from}: ${err.message}`, { cause: err }));
      });
    });
  }

  /** Sends one action; resolves with `result`, rejects with the daemon's error as a HotlineError. */
  request(action: string, params: object): Promise<unknown> {
    return this.exchange(action, params).then((reply) => {
      if (reply.ok) return reply.result;
      throw HotlineError.fromWire(reply.error);
    });
  }

  /**
   * Sends one action and resolves with its whole reply, an error reply too (`frame` is the reply
   * as sent); rejects only when the connection closes first. For tools that show the wire.
   */
  exchange(action: string, params: object): Promise<Reply> {
    if (this.closed)
      return Promise.reject(new HotlineError("unavailable", `the connection to ${this.url} is closed; ${action} was not sent`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { action, resolve, reject });
      this.ws.send(JSON.stringify({ ...params, id, action }));
    });
  }

  /** Every frame received, as sent (before it is matched to a request or handed to onEvent listeners). */
  onFrame(listener: (frame: WireFrame) => void): () => void {
    this.frameListeners.add(listener);
    return () => this.frameListeners.delete(listener);
  }

  /**
   * The `ws` WebSocket itself, for tools and tests that speak below the protocol (raw sends,
   * terminate). Typed as an EventEmitter so the published types do not need `ws`'s.
   */
  get socket(): EventEmitter {
    return this.ws;
  }

  onEvent(listener: (event: FollowEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Runs once when the socket closes, for whatever reason; the returned function unsubscribes. */
  onClose(listener: (reason: string) => void): () => void {
    if (this.closed) {
      listener("already closed");
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * Like a socket's unref(): an unref'd connection does not keep the Node process alive (the
   * client's idle follow connections); ref() undoes it. `ws` keeps its TCP socket in `_socket`.
   */
  unref(): void {
    this.tcp?.unref();
  }

  ref(): void {
    this.tcp?.ref();
  }

  private get tcp(): Socket | undefined {
    return (this.ws as unknown as { _socket?: Socket | null })._socket ?? undefined;
  }

  /** Stops reading from the socket (the daemon's followers then read from disk at our pace). */
  pause(): void {
    if (!this.closed) this.ws.pause();
  }

  resume(): void {
    if (!this.closed) this.ws.resume();
  }

  /** Closes with the WebSocket handshake and resolves once the socket is gone (no timer left behind). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.closed) return resolve();
      this.closeListeners.add(() => resolve());
      this.ws.resume();
      this.ws.close(1000, "client closed");
    });
    return this.closing;
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    let incoming: ReturnType<typeof parseFrame>;
    try {
      incoming = parseFrame(data, isBinary);
    } catch {
      this.ws.terminate(); // a daemon that sends garbage cannot be trusted with the rest of the stream
      return;
    }
    for (const listener of this.frameListeners) listener(incoming.frame);
    if (incoming.kind === "event") {
      for (const listener of this.eventListeners) listener(incoming.event);
      return;
    }
    const pending = typeof incoming.id === "number" ? this.pending.get(incoming.id) : undefined;
    if (!pending) return;
    this.pending.delete(incoming.id as number);
    pending.resolve(incoming);
  }

  private handleClose(reason: string): void {
    this.closed = true;
    for (const p of this.pending.values()) {
      p.reject(new HotlineError("unavailable", `the connection to ${this.url} closed (${reason}) before the reply to ${p.action}`));
    }
    this.pending.clear();
    this.eventListeners.clear();
    this.frameListeners.clear();
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const listener of listeners) listener(reason);
  }
}

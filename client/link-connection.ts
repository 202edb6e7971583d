import type { ServerEvent } from "../protocol/events.js";
import type { ActionName, ParamsFor, ResultFor } from "../protocol/index.js";
import type { WireError } from "../protocol/errors.js";
import { LINK_TOKEN_PREFIX, PAGE_SUBPROTOCOL } from "../protocol/link.js";
import { HotlineError } from "./errors.js";

/** The part of a WebSocket this needs: the browser's own (or any with the same shape), injected. */
export interface LinkSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type LinkSocketConstructor = new (url: string, protocols: string[]) => LinkSocket;

/** Subprotocols of a link socket: the daemon answers the first and reads the token from the second. */
export function linkProtocols(token: string): string[] {
  return [PAGE_SUBPROTOCOL, `${LINK_TOKEN_PREFIX}${token}`];
}

type Pending = { action: string; resolve: (result: unknown) => void; reject: (error: HotlineError) => void };

/**
 * A connection opened with a browser link's token: where a page cannot set Authorization, the
 * token travels in Sec-WebSocket-Protocol. Requests are typed by protocol/ like HotlineClient's;
 * events arrive as the protocol's text frames (a page asks for no binary frames).
 */
export class LinkConnection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly eventListeners = new Set<(event: ServerEvent) => void>();
  private readonly closeListeners = new Set<(code: number, reason: string) => void>();
  closed = false;

  private constructor(private readonly socket: LinkSocket) {
    socket.onmessage = (event) => this.onMessage(event.data);
    socket.onclose = (event) => this.handleClose(event.code, event.reason);
  }

  /** Opens the socket; rejects with `unavailable` when it never opens (the browser does not say why). */
  static open(url: string, token: string, Socket: LinkSocketConstructor): Promise<LinkConnection> {
    return new Promise((resolve, reject) => {
      const socket = new Socket(url, linkProtocols(token));
      socket.onerror = () => {};
      socket.onopen = () => resolve(new LinkConnection(socket));
      socket.onclose = (event) =>
        reject(new HotlineError("unavailable", `the socket to ${url} closed before it opened (code ${event.code})`));
    });
  }

  request<N extends ActionName>(action: N, params: ParamsFor<N>): Promise<ResultFor<N>> {
    if (this.closed) return Promise.reject(new HotlineError("unavailable", `the connection is closed; ${action} was not sent`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { action, resolve: resolve as (result: unknown) => void, reject });
      this.socket.send(JSON.stringify({ ...params, id, action }));
    });
  }

  onEvent(listener: (event: ServerEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Runs once when the socket closes: 4001 means the link's token expired or was revoked. */
  onClose(listener: (code: number, reason: string) => void): void {
    this.closeListeners.add(listener);
  }

  close(): void {
    this.socket.close(1000, "page closed");
  }

  private onMessage(data: unknown): void {
    if (typeof data !== "string") return; // a page never asks for binary frames
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return this.socket.close(1002, "malformed frame");
    }
    if (typeof frame.event === "string") {
      for (const listener of this.eventListeners) listener(frame as ServerEvent);
      return;
    }
    const pending = typeof frame.id === "number" ? this.pending.get(frame.id) : undefined;
    if (!pending) return;
    this.pending.delete(frame.id as number);
    if (frame.ok === true) pending.resolve(frame.result);
    else pending.reject(HotlineError.fromWire(frame.error as WireError));
  }

  private handleClose(code: number, reason: string): void {
    this.closed = true;
    for (const p of this.pending.values())
      p.reject(new HotlineError("unavailable", `the connection closed (code ${code}) before the reply to ${p.action}`));
    this.pending.clear();
    for (const listener of this.closeListeners) listener(code, reason);
    this.closeListeners.clear();
    this.eventListeners.clear();
  }
}

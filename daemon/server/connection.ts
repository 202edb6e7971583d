import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import type { ConnectionState } from "../actions/context.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { Follower, FollowSink } from "../jobs/follow.js";
import { findRequestId } from "./frame-id.js";

/** Bytes queued for one client (replies and events the kernel has not taken yet): past this, stop. */
const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 3 * 1024 * 1024;
/** Requests of one connection being handled at once; more wait unread in the socket. */
export const MAX_REQUESTS_IN_FLIGHT = 256;

/** Close codes the daemon uses besides the standard ones (1001 shutdown, 1009 frame too large). */
export const CLOSE_TOKEN_INVALID = 4001;
export const CLOSE_INTERNAL = 1011;

/** What the connection asks before each request: undefined while its token is valid, else why not. */
export type TokenValidity = () => string | undefined;

/**
 * One client socket. Frames out are counted until the kernel takes them, so followers stop when
 * the client reads slowly. Frames in are queued and dispatched one per event-loop turn while the
 * client's queued output is under its budget and fewer than MAX_REQUESTS_IN_FLIGHT are being
 * handled; otherwise the socket is paused, so a client that pipelines requests but never reads
 * the replies is held by TCP backpressure instead of growing the daemon's memory.
 */
export class Connection implements FollowSink {
  private inflight = 0;
  private drainWaiters: Array<() => void> = [];
  private alive = true;
  private requests = 0;
  private readonly pending: Buffer[] = [];
  private drainScheduled = false;
  private readPaused = false;
  private overBudget = false;
  private expiryTimer: NodeJS.Timeout | undefined;
  readonly state: ConnectionState;

  constructor(
    private readonly ws: WebSocket,
    readonly id: string,
    scope: Scope,
    readonly tokenId: string,
    private readonly dispatcher: Dispatcher,
    private readonly softLimit: number,
    private readonly tokenValidity: TokenValidity,
    private readonly log: Logger,
  ) {
    this.state = { id, scope, sink: this, followers: new Map<string, Follower>() };
    ws.on("message", (data, isBinary) => this.guard(() => this.onMessage(data as Buffer, isBinary)));
    ws.on("pong", () => (this.alive = true));
    ws.on("close", () => this.onClose());
    ws.on("error", (err) => log.debug({ err }, "socket error"));
  }

  get writable(): boolean {
    return this.inflight < HIGH_WATER && this.ws.readyState === this.ws.OPEN;
  }

  /** Closes the connection when its token expires, even if the client sends nothing more. */
  expireAt(expiresAt: number): void {
    // setTimeout holds at most ~24.8 days; a later expiry is caught by the per-request check.
    const delay = Math.min(Math.max(0, expiresAt - Date.now()), 2 ** 31 - 1);
    this.expiryTimer = setTimeout(() => this.revoke("the token has expired"), delay);
    this.expiryTimer.unref();
  }

  /** The token no longer holds: followers stop and the socket closes with 4001 and the reason. */
  revoke(why: string): void {
    this.log.info({ why }, "closing a connection whose token no longer holds");
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(CLOSE_TOKEN_INVALID, why.slice(0, 120));
  }

  onDrain(callback: () => void): void {
    this.drainWaiters.push(callback);
  }

  send(frame: object): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    const text = JSON.stringify(frame);
    // Characters, not bytes: exact for the ASCII that dominates, and it spares a second scan.
    this.track(text.length, (done) => this.ws.send(text, done));
  }

  sendBinary(frame: Buffer, sent?: () => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return sent?.();
    this.track(frame.length, (done) => this.ws.send(frame, { binary: true }, done), sent);
  }

  private track(bytes: number, write: (done: (err?: Error) => void) => void, sent?: () => void): void {
    this.inflight += bytes;
    write((err) => {
      this.inflight -= bytes;
      sent?.();
      if (err) return;
      if (this.inflight <= LOW_WATER && this.drainWaiters.length) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        for (const w of waiters) this.guard(w);
      }
      if (this.pending.length && this.inflight < HIGH_WATER) this.scheduleDrain();
    });
  }

  /**
   * Runs a callback of this connection; a throw fails this connection alone (closed 1011 with the
   * reason), never the daemon and never the other clients.
   */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, "connection callback failed; closing this connection");
      if (this.ws.readyState === this.ws.OPEN) this.ws.close(CLOSE_INTERNAL, `internal error: ${String((err as Error)?.message ?? err).slice(0, 100)}`);
    }
  }

  /** Heartbeat tick: a client that did not answer the last ping is gone. */
  heartbeat(): void {
    // While we hold its requests unread we do not read its pongs either; that is our doing.
    if (this.readPaused) return;
    this.guard(() => {
      if (!this.alive) return this.ws.terminate();
      this.alive = false;
      this.ws.ping();
    });
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      this.send({ ok: false, error: new ActionError("bad_json", "binary frames are not accepted; send JSON text frames").toWire() });
      return;
    }
    if (data.length > this.softLimit) {
      // Echo the id when one can be found, or a client waiting on it would wait forever.
      const id = findRequestId(data);
      const message = `frame of ${data.length} bytes exceeds maxPayloadBytes (${this.softLimit}); send large content in pieces (files.write chunks, several jobs.input calls)`;
      this.send({ ...(id === undefined ? {} : { id }), ok: false, error: new ActionError("limit_exceeded", message).toWire() });
      return;
    }
    this.pending.push(data);
    if (!this.drainScheduled) this.drainPending();
  }

  private canDispatch(): boolean {
    return this.requests < MAX_REQUESTS_IN_FLIGHT && this.inflight < HIGH_WATER && this.ws.readyState === this.ws.OPEN;
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      this.guard(() => this.drainPending());
    });
  }

  /**
   * Dispatches one queued request, then yields a turn before the next, so the replies of what was
   * dispatched are counted in `inflight` before more work is started for the same client.
   */
  private drainPending(): void {
    if (this.pending.length && this.canDispatch()) {
      this.dispatch(this.pending.shift()!);
      // Even with nothing queued yet: ws emits a burst of messages synchronously, and the rest of
      // this burst must wait for the next turn too.
      this.scheduleDrain();
    } else if (this.pending.length && !this.overBudget) {
      this.overBudget = true;
      this.log.debug({ queuedBytes: this.inflight, requests: this.requests, waiting: this.pending.length }, "client over budget: requests wait until it reads");
    }
    if (this.pending.length === 0) this.overBudget = false;
    // Whatever is queued was read already; read no more until it has been started.
    const blocked = this.pending.length > 0;
    if (blocked && !this.readPaused) {
      this.readPaused = true;
      this.ws.pause();
    } else if (!blocked && this.readPaused) {
      this.readPaused = false;
      this.ws.resume();
    }
  }

  private dispatch(data: Buffer): void {
    const why = this.tokenValidity();
    if (why !== undefined) {
      const id = findRequestId(data);
      this.send({ ...(id === undefined ? {} : { id }), ok: false, error: new ActionError("unauthorized", `${why}; reconnect with a valid token`).toWire() });
      this.revoke(why);
      return;
    }
    this.requests++;
    void this.dispatcher
      .handle(data.toString("utf8"), this.state, (reply) => this.send(reply))
      .finally(() => {
        this.requests--;
        if (this.pending.length) this.scheduleDrain();
      });
  }

  private onClose(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.pending.length = 0;
    // Followers stop; the jobs themselves never notice that a client went away.
    for (const follower of [...this.state.followers.values()]) follower.close();
    this.state.followers.clear();
    this.drainWaiters = [];
    this.log.debug("connection closed");
  }
}

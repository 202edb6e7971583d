import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import { CLOSE_TOKEN_INVALID } from "../../protocol/link.js";
import type { ConnectionState } from "../actions/context.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { Follower, FollowSink } from "../jobs/follow.js";
import { findRequestId } from "./frame-id.js";
import { RequestGate } from "./request-gate.js";

/** Bytes queued for one client (replies and events the kernel has not taken yet): past this, stop. */
const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 3 * 1024 * 1024;

/** Close codes the daemon uses besides the standard ones (1001 shutdown, 1009 frame too large). */
export { CLOSE_TOKEN_INVALID };
export const CLOSE_INTERNAL = 1011;

/** Heartbeat intervals in a row with output queued but none taken before a paused client is cut off. */
const STALLED_TICKS = 2;

/** The longest delay setTimeout keeps (2^31 - 1 ms, ~24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the connection asks before each request: undefined while its token is valid, else why not. */
export type TokenValidity = () => string | undefined;

/**
 * One client socket. Frames out are counted until the kernel takes them, so followers stop when
 * the client reads slowly; frames in pass a RequestGate, which starts them only while that count
 * is under budget and pauses the socket otherwise.
 */
export class Connection implements FollowSink {
  private inflight = 0;
  private drainWaiters: Array<() => void> = [];
  private drainScheduled = false;
  private alive = true;
  /** Whether a write of ours completed since the last heartbeat tick: the client reads its output. */
  private drained = false;
  /** Heartbeat ticks in a row that found the socket paused with output queued and none drained. */
  private stalledTicks = 0;
  private readonly gate: RequestGate;
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
    this.state = { id, scope, tokenId, sink: this, followers: new Map<string, Follower>() };
    this.gate = new RequestGate({
      hasRoom: () => this.writable,
      start: (frame) => this.dispatch(frame),
      pause: () => ws.pause(),
      resume: () => ws.resume(),
      guard: (fn) => this.guard(fn),
      onBehind: (waiting, running) =>
        log.debug({ queuedBytes: this.inflight, running, waiting }, "client over budget: requests wait until it reads"),
    });
    ws.on("message", (data, isBinary) => this.guard(() => this.onMessage(data as Buffer, isBinary)));
    ws.on("pong", () => (this.alive = true));
    ws.on("close", () => this.guard(() => this.onClose()));
    ws.on("error", (err) => log.debug({ err }, "socket error"));
  }

  get writable(): boolean {
    return this.inflight < HIGH_WATER && this.ws.readyState === this.ws.OPEN;
  }

  /** Closes the connection when its token expires, even if the client sends nothing more. */
  expireAt(expiresAt: number): void {
    const left = expiresAt - Date.now();
    if (left <= 0) return this.revoke("the token has expired");
    // setTimeout holds at most ~24.8 days (a longer delay fires at once): a later expiry re-arms.
    this.expiryTimer = setTimeout(() => this.expireAt(expiresAt), Math.min(left, MAX_TIMER_MS));
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

  batch(send: () => void): void {
    // ws has no batching of its own; corking its socket (a net.Socket) holds every write until uncork.
    const socket = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    socket?.cork();
    try {
      send();
    } finally {
      socket?.uncork();
    }
  }

  send(frame: object): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    const text = JSON.stringify(frame);
    // Characters, not bytes: exact for the ASCII that dominates, and it spares a second scan.
    this.track(text.length, (done) => this.ws.send(text, done));
  }

  sendText(frame: Buffer, sent?: () => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return sent?.();
    this.track(frame.length, (done) => this.ws.send(frame, { binary: false }, done), sent);
  }

  sendBinary(frame: Buffer, sent?: () => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return sent?.();
    this.track(frame.length, (done) => this.ws.send(frame, { binary: true }, done), sent);
  }

  private track(bytes: number, write: (done: (err?: Error) => void) => void, sent?: () => void): void {
    this.inflight += bytes;
    write((err) => {
      this.inflight -= bytes;
      this.drained = true;
      sent?.();
      if (err) return;
      if (this.inflight <= LOW_WATER && this.drainWaiters.length && !this.drainScheduled) {
        // In a turn of its own: a write the kernel takes at once calls back on the same turn, so a
        // fast reader's drains would chain the senders' slices into one turn without end (a 40 MB
        // JSON catch-up held the loop 150-480 ms).
        this.drainScheduled = true;
        setImmediate(() => {
          this.drainScheduled = false;
          const waiters = this.drainWaiters;
          this.drainWaiters = [];
          for (const w of waiters) this.guard(w);
        });
      }
      if (this.inflight < HIGH_WATER) this.gate.wake();
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
      if (this.ws.readyState === this.ws.OPEN)
        // ws refuses a close reason over 123 bytes (by throwing): the details are in the log.
        this.ws.close(CLOSE_INTERNAL, "internal error");
    }
  }

  /**
   * Heartbeat tick: a client that did not answer the last ping is gone. While its requests are held
   * unread (the gate paused) its pongs go unread too, which is our doing, so it is judged by its
   * output instead: output queued and none of it taken for STALLED_TICKS ticks in a row means it
   * pipelined and stopped reading, and would keep its connection slot and queued bytes forever.
   * A connection paused only by running requests (a long jobs.wait) has nothing queued and stays.
   */
  heartbeat(): void {
    this.guard(() => {
      const drained = this.drained;
      this.drained = false;
      if (this.gate.paused) {
        this.alive = true; // pongs unread by us are no sign of a dead client once reading resumes
        this.stalledTicks = this.inflight > 0 && !drained ? this.stalledTicks + 1 : 0;
        if (this.stalledTicks < STALLED_TICKS) return;
        this.log.info({ queuedBytes: this.inflight }, "closing a connection that stopped reading its output");
        return this.ws.terminate();
      }
      this.stalledTicks = 0;
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
    this.gate.push(data);
  }

  /** Starts one request, unless the connection's token no longer holds. */
  private dispatch(data: Buffer): Promise<void> | undefined {
    const why = this.tokenValidity();
    if (why !== undefined) {
      const id = findRequestId(data);
      this.send({
        ...(id === undefined ? {} : { id }),
        ok: false,
        error: new ActionError("unauthorized", `${why}; reconnect with a valid token`).toWire(),
      });
      this.revoke(why);
      return undefined;
    }
    return this.dispatcher.handle(data.toString("utf8"), this.state, (reply) => this.send(reply));
  }

  private onClose(): void {
    // Each cleanup runs even if one before it throws: what is skipped would outlive its client.
    const cleanups: Array<() => void> = [
      () => clearTimeout(this.expiryTimer),
      () => this.gate.clear(),
      // Followers stop; the jobs themselves never notice that a client went away.
      ...[...this.state.followers.values()].map((follower) => () => follower.close()),
      () => this.state.followers.clear(),
      () => this.state.files?.close(), // uploads' temporary files removed, watchers stopped
      () => this.state.watch?.close(),
      () => (this.drainWaiters = []),
    ];
    for (const cleanup of cleanups) this.guard(cleanup);
    this.log.debug("connection closed");
  }
}

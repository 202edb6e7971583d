import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import type { ConnectionState } from "../actions/context.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { Follower, FollowSink } from "../jobs/follow.js";

const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 3 * 1024 * 1024;

/**
 * One client socket: frames in go to the dispatcher (many in flight at once), frames out are
 * counted until the kernel takes them, so followers can stop when the client reads slowly.
 */
export class Connection implements FollowSink {
  private inflight = 0;
  private drainWaiters: Array<() => void> = [];
  private alive = true;
  readonly state: ConnectionState;

  constructor(
    private readonly ws: WebSocket,
    readonly id: string,
    scope: Scope,
    private readonly dispatcher: Dispatcher,
    private readonly softLimit: number,
    private readonly log: Logger,
  ) {
    this.state = { id, scope, sink: this, followers: new Map<string, Follower>() };
    ws.on("message", (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on("pong", () => (this.alive = true));
    ws.on("close", () => this.onClose());
    ws.on("error", (err) => log.debug({ err }, "socket error"));
  }

  get writable(): boolean {
    return this.inflight < HIGH_WATER && this.ws.readyState === this.ws.OPEN;
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
        for (const w of waiters) w();
      }
    });
  }

  /** Heartbeat tick: a client that did not answer the last ping is gone. */
  heartbeat(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
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
      this.send({ ok: false, error: new ActionError("limit_exceeded", `frame of ${data.length} bytes exceeds maxPayloadBytes (${this.softLimit})`).toWire() });
      return;
    }
    void this.dispatcher.handle(data.toString("utf8"), this.state, (reply) => this.send(reply));
  }

  private onClose(): void {
    // Followers stop; the jobs themselves never notice that a client went away.
    for (const follower of [...this.state.followers.values()]) follower.close();
    this.state.followers.clear();
    this.state.files?.close(); // uploads' temporary files removed, watchers stopped
    this.drainWaiters = [];
    this.log.debug("connection closed");
  }
}

/** Requests of one connection being handled at once; more wait unread in the socket. */
export const MAX_REQUESTS_IN_FLIGHT = 256;

/** What the gate needs from its connection. */
export interface GateHooks {
  /** Whether the client's queued output leaves room to start another request. */
  hasRoom(): boolean;
  /** Starts one request; a promise while it is being handled, nothing when it was answered at once. */
  start(frame: Buffer): Promise<void> | undefined;
  /** Stops and restarts reading the client's socket. */
  pause(): void;
  resume(): void;
  /** Runs a callback so that a throw fails this connection alone. */
  guard(fn: () => void): void;
  /** Called once each time the client falls behind (for a debug log). */
  onBehind(waiting: number, running: number): void;
}

/**
 * Admission of one connection's requests: frames are queued as they arrive and started one per
 * event-loop turn while there is room (output under budget, fewer than MAX_REQUESTS_IN_FLIGHT
 * running); while any wait, the socket is paused, so a client that pipelines but never reads its
 * replies is held by TCP backpressure instead of growing the daemon's memory. One per turn,
 * because ws emits a burst of messages synchronously and the replies of what was started must be
 * counted before more is started.
 */
export class RequestGate {
  private readonly pending: Buffer[] = [];
  private running = 0;
  private scheduled = false;
  private behind = false;
  paused = false;

  constructor(private readonly hooks: GateHooks) {}

  /** A request frame arrived. */
  push(frame: Buffer): void {
    this.pending.push(frame);
    if (!this.scheduled) this.admit();
    else if (!this.paused) {
      // ws emits a read chunk's messages synchronously: stop reading now, not a turn later, so what
      // waits is at most what was already read.
      this.paused = true;
      this.hooks.pause();
    }
  }

  /** Something freed room (output drained, a request finished): try again next turn. */
  wake(): void {
    if (this.pending.length) this.schedule();
  }

  /** The connection closed: queued requests are dropped unstarted. */
  clear(): void {
    this.pending.length = 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.hooks.guard(() => this.admit());
    });
  }

  private admit(): void {
    if (this.pending.length && this.running < MAX_REQUESTS_IN_FLIGHT && this.hooks.hasRoom()) {
      this.track(this.hooks.start(this.pending.shift()!));
      this.schedule(); // even with nothing queued yet: the rest of this burst waits a turn
    } else if (this.pending.length && !this.behind) {
      this.behind = true;
      this.hooks.onBehind(this.pending.length, this.running);
    }
    if (this.pending.length === 0) this.behind = false;
    // What is queued was read already; read no more until it has been started.
    const blocked = this.pending.length > 0;
    if (blocked !== this.paused) {
      this.paused = blocked;
      if (blocked) this.hooks.pause();
      else this.hooks.resume();
    }
  }

  private track(handling: Promise<void> | undefined): void {
    if (!handling) return;
    this.running++;
    // On either outcome: `finally` would hand a rejection on to a promise nobody awaits.
    const done = (): void => {
      this.running--;
      this.wake();
    };
    handling.then(done, done);
  }
}

import type { Socket } from "node:net";

/**
 * Sockets that have not proved themselves yet: accepted, but not (yet) an authorised WebSocket or
 * a request of a known MCP session; a keep-alive socket between requests counts again. They are
 * bounded apart from authorised clients: past `max`, the oldest is closed. A client that presents
 * its token at once is never the oldest, so however many sockets are held half-open, an authorised
 * client still gets in, and they can never take the file descriptors its work needs.
 */
export class UnprovenSockets {
  private readonly sockets = new Set<Socket>();
  private readonly watched = new WeakSet<Socket>();
  /** Sockets closed for being the oldest past the bound, since start. */
  closed = 0;

  constructor(
    readonly max: number,
    private readonly onOverflow: (closedSoFar: number) => void,
  ) {}

  /** A socket was accepted, or a proven one is idle again: it counts, as the newest. */
  add(socket: Socket): void {
    if (socket.destroyed) return;
    if (!this.watched.has(socket)) {
      this.watched.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    }
    this.sockets.delete(socket);
    this.sockets.add(socket); // a Set iterates in insertion order: the first is the oldest
    while (this.sockets.size > this.max) {
      const oldest = this.sockets.values().next().value!;
      this.sockets.delete(oldest);
      oldest.destroy();
      this.onOverflow(++this.closed);
    }
  }

  /** The socket is an authorised client's now: it leaves the budget. */
  prove(socket: Socket): void {
    this.sockets.delete(socket);
  }

  has(socket: Socket): boolean {
    return this.sockets.has(socket);
  }

  get size(): number {
    return this.sockets.size;
  }
}

/**
 * How many unproven sockets the daemon allows: an eighth of its open-file limit, between 8 and 256,
 * so that together with maxConnections they always leave descriptors for jobs and files.
 */
export function unprovenBudget(openFileLimit: number | undefined): number {
  return Math.max(8, Math.min(256, Math.floor((openFileLimit ?? 1024) / 8)));
}

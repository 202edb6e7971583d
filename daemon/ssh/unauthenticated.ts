import type { Socket } from "node:net";

/**
 * Sockets on the SSH port that have not authenticated yet (silent, mid-handshake, or waiting for
 * their handshake's turn), bounded apart from authenticated connections: past `max` the oldest is
 * closed. A client that logs in at once is never the oldest, so sockets held open by a stranger
 * cannot keep a user out (the HTTP side does the same in daemon/server/unproven-sockets.ts).
 */
export class UnauthenticatedSockets {
  /** In arrival order: a Set iterates in insertion order, so the first is the oldest. */
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly max: number,
    private readonly onClosedOldest: (socket: Socket) => void,
  ) {}

  /** A new socket: it counts until it authenticates or closes. */
  add(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    while (this.sockets.size > this.max) {
      const oldest = this.sockets.values().next().value!;
      this.sockets.delete(oldest);
      this.onClosedOldest(oldest);
      oldest.destroy();
    }
  }

  /** The socket's connection has authenticated: it leaves this budget. */
  authenticated(socket: Socket): void {
    this.sockets.delete(socket);
  }

  get size(): number {
    return this.sockets.size;
  }
}

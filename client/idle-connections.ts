import type { Connection } from "./connection.js";

/** Idle follow connections kept for the next follow; more are closed. */
export const MAX_IDLE_CONNECTIONS = 2;

/**
 * Connections whose follow ended cleanly (the daemon sent job.exit, so its follower is gone and
 * nothing more arrives on them), kept open for the next follow: opening one costs an HTTP upgrade
 * with auth and a fresh TCP window, which halved the throughput of a follow of a finished job.
 *
 * An idle connection is unref'd rather than closed after an idle timeout: it then costs nothing
 * while the program runs (no timer, no wake-up, and it is there whenever the next follow comes)
 * and cannot keep a program that is done from exiting. A connection the daemon closes while idle
 * leaves the pool at once.
 */
export class IdleConnections {
  /** Newest last; each with the unsubscribe of the close listener that drops it. */
  private readonly idle: Array<{ connection: Connection; forget: () => void }> = [];

  /** An idle connection that is still open, ref'd again; undefined when there is none. */
  take(): Connection | undefined {
    for (let entry = this.idle.pop(); entry; entry = this.idle.pop()) {
      entry.forget();
      if (entry.connection.closed) continue;
      entry.connection.ref();
      return entry.connection;
    }
    return undefined;
  }

  /**
   * Keeps a connection that carries no follow, no listener of its user and no request in flight.
   * Resumes it (a slow consumer may have paused it); closes it instead when the pool is full.
   */
  keep(connection: Connection): void {
    if (connection.closed) return;
    if (this.idle.length >= MAX_IDLE_CONNECTIONS) {
      void connection.close();
      return;
    }
    connection.resume();
    connection.unref();
    const forget = connection.onClose(() => {
      const at = this.idle.findIndex((entry) => entry.connection === connection);
      if (at >= 0) this.idle.splice(at, 1);
    });
    this.idle.push({ connection, forget });
  }

  /** Closes every idle connection; resolves once their sockets are gone. */
  async close(): Promise<void> {
    const entries = this.idle.splice(0);
    await Promise.all(
      entries.map(({ connection, forget }) => {
        forget();
        connection.ref(); // close() is awaited: the process must live until the handshake is done
        return connection.close();
      }),
    );
  }
}

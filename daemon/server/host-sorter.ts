import { maxHeaderSize } from "node:http";
import type { Socket } from "node:net";
import type { UnprovenSockets } from "./unproven-sockets.js";

/** A space of hosts on the daemon's port served apart from the API (the previews): it takes whole connections. */
export interface HostClaim {
  claimsHost(host: string | undefined): boolean;
  /** Serves a connection whose first bytes (its first request head at least) were `first`. */
  serve(socket: Socket, first: Buffer, proof: { prove(): void; unprove(): void }): void;
}

/** The first request head must arrive within this (the daemon's HTTP server allows the same). */
const FIRST_HEAD_MS = 10_000;
const HOST_LINE = /\r\nhost[ \t]*:[ \t]*([^\r\n]*)/i;

/**
 * The daemon's accepted connections, sorted by the Host of their first request: a preview host's
 * connection goes whole to the preview proxy (which reads HTTP itself, so proxying costs no
 * second HTTP stack), every other one to `toHttp`, the daemon's HTTP server, with the bytes read
 * so far. Both kinds start as unproven sockets.
 */
export function sortByHost(
  toHttp: (socket: Socket, read?: Buffer) => void,
  claim: HostClaim | undefined,
  unproven: UnprovenSockets,
): (socket: Socket) => void {
  return (socket) => {
    unproven.add(socket);
    if (!claim) return toHttp(socket);
    let read: Buffer | undefined;
    const stop = (): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("end", onEnd);
      socket.pause();
    };
    const onError = (): void => {
      stop();
      socket.destroy();
    };
    const onEnd = (): void => {
      stop();
      socket.destroy();
    };
    const onData = (chunk: Buffer): void => {
      read = read ? Buffer.concat([read, chunk]) : chunk;
      const end = read.indexOf("\r\n\r\n", 0, "latin1");
      if (end < 0 && read.length <= maxHeaderSize) return;
      stop();
      const host = end < 0 ? undefined : HOST_LINE.exec(read.toString("latin1", 0, end + 2))?.[1]?.trim();
      try {
        if (host !== undefined && claim.claimsHost(host))
          return claim.serve(socket, read, { prove: () => unproven.prove(socket), unprove: () => unproven.add(socket) });
      } catch {
        return void socket.destroy();
      }
      // Not a preview (or too long a head: the HTTP server answers 431).
      toHttp(socket, read);
    };
    const timer = setTimeout(() => {
      stop();
      socket.destroy();
    }, FIRST_HEAD_MS);
    timer.unref();
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("end", onEnd);
  };
}

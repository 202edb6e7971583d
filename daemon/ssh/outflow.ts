import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";

/** Bytes a connection's socket may hold unsent before the sources of all its channels pause. */
export const SOCKET_BACKLOG_BYTES = 1024 * 1024;
/** Bytes one channel stream may hold that its client's window has not let out yet, before its source pauses. */
export const CHANNEL_BACKLOG_BYTES = 256 * 1024;

/**
 * What one connection holds for its client, bounded. ssh2 writes a channel's data to the socket
 * as far as the client's window allows and never asks whether the socket keeps up, so a client
 * that grants a 1 GiB window and stops reading would have the daemon buffer 1 GiB. Every source
 * (a process's stdout and stderr, a terminal, a forwarded socket) writes through here instead and
 * pauses while the socket holds over SOCKET_BACKLOG_BYTES unsent (all channels share it) or its
 * own channel holds over CHANNEL_BACKLOG_BYTES the window has not let out (that client's own
 * business: other channels go on). So a connection holds at most about 1 MiB plus 256 KiB and a
 * chunk per channel.
 */
export class Outflow {
  /** Bytes written to each channel stream that ssh2 has not yet handed to the socket (a closed channel's are never handed on). */
  private readonly held = new WeakMap<Writable, number>();
  /** A paused source per channel stream, resumed once both have room. */
  private readonly waiting = new Map<Writable, () => void>();

  constructor(private readonly socket: Socket) {
    socket.on("drain", () => {
      for (const stream of [...this.waiting.keys()]) {
        if (!stream.writable)
          this.waiting.delete(stream); // its channel has closed
        else this.wake(stream);
      }
    });
    socket.once("close", () => this.waiting.clear());
  }

  /** Writes `data` to a channel stream; false when the source should pause, and then `resume` is called once there is room. */
  write(stream: Writable, data: Buffer, resume: () => void): boolean {
    // A channel that has ended takes no more (as pipe() stops at the destination's end): a write would be an error event.
    if (!stream.writable) return true;
    this.held.set(stream, (this.held.get(stream) ?? 0) + data.length);
    stream.write(data, () => {
      const left = (this.held.get(stream) ?? data.length) - data.length;
      if (left > 0) this.held.set(stream, left);
      else this.held.delete(stream);
      this.wake(stream);
    });
    if (this.hasRoom(stream)) return true;
    this.waiting.set(stream, resume);
    return false;
  }

  /** Pipes a readable into a channel stream through write(); `end` ends the stream with the source. */
  pipe(source: Readable, stream: Writable, options: { end?: boolean } = {}): void {
    const resume = (): void => void source.resume();
    source.on("data", (chunk: Buffer) => {
      if (!this.write(stream, chunk, resume)) source.pause();
    });
    if (options.end) source.once("end", () => stream.end());
  }

  private hasRoom(stream: Writable): boolean {
    return (this.held.get(stream) ?? 0) < CHANNEL_BACKLOG_BYTES && this.socket.writableLength < SOCKET_BACKLOG_BYTES;
  }

  private wake(stream: Writable): void {
    const resume = this.waiting.get(stream);
    if (!resume || !this.hasRoom(stream)) return;
    this.waiting.delete(stream);
    resume();
  }
}

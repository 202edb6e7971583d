import type { Socket } from "node:net";
import { type Work, type WorkTracker, work as tracker } from "../watchdog/work.js";

/** Request heads one connection may hand the HTTP server in one turn of the event loop (pipelining). */
export const HEADS_PER_CONNECTION = 8;
/** Request heads of connections not yet authorised, all of them together, per turn. */
export const UNPROVEN_HEADS_PER_TURN = 32;
/**
 * Bytes of connections not yet authorised, per turn: one connection's, and all of theirs together.
 * Heads alone would not bound a body of many tiny chunks (`1\r\na\r\n`…), each a callback of the
 * parser's: about 2 µs per 6 bytes, so 32 KiB is ~11 ms of a turn at most.
 */
export const UNPROVEN_BYTES_PER_CONNECTION = 16 * 1024;
export const UNPROVEN_BYTES_PER_TURN = 32 * 1024;

/** What the watchdog blames for a late turn spent parsing and answering the daemon's own HTTP requests. */
const INTAKE: Work = { label: "http front door" };

/** One connection's bytes read from the kernel and not yet handed to the HTTP server. */
interface Paced {
  readonly socket: Socket;
  readonly queue: Buffer[];
  /** The socket's own `push` and `_read`, which the intake stands in front of. */
  readonly push: (chunk: Buffer | null) => boolean;
  readonly read: (size: number) => void;
  /** End of stream arrived while bytes were still queued. */
  ended: boolean;
  /** The stream asked for more (its `_read`) while bytes were still queued. */
  wantsRead: boolean;
  /** The stream's buffer is full (the HTTP server paused it): nothing more until it asks. */
  blocked: boolean;
  released: boolean;
  turn: number;
  heads: number;
  bytes: number;
}

/** Where the first `limit` request heads of `chunk` end (an empty line ends a head), and how many there are up to there. */
export function afterHeads(chunk: Buffer, limit: number): { end: number; heads: number } {
  let heads = 0;
  for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) {
    // "\n\n" or "\n\r\n": an empty line. Counting bare LFs too means a lenient parser is never given more.
    const next = chunk[at + 1];
    if (next !== 10 && !(next === 13 && chunk[at + 2] === 10)) continue;
    if (heads === limit) return { end: at, heads };
    heads++;
  }
  return { end: chunk.length, heads };
}

/**
 * Node's HTTP server parses a whole read (64 KiB: 2,300 pipelined `GET /`) and answers every
 * request in it in one turn, and libuv reads on while the server keeps up: one client writing
 * 40,000 requests at once held the loop for 0.6–1.1 s. The intake stands between the socket and
 * the server (in front of the socket's `push`, which Node's socket calls with each read, and its
 * `_read`, which asks for more): it hands the server at most HEADS_PER_CONNECTION request heads per
 * turn from any connection, and from connections not yet authorised at most
 * UNPROVEN_HEADS_PER_TURN heads and UNPROVEN_BYTES_PER_TURN bytes per turn together, in the order
 * they asked; the rest waits, with the socket not read (TCP backpressure), so what waits is at most
 * one read per connection. An upgrade takes the socket out of it (`release`): a WebSocket's frames
 * have a gate of their own (request-gate.ts).
 */
export class PacedIntake {
  private readonly paced = new WeakMap<Socket, Paced>();
  /** Connections whose queued bytes wait for a later turn, in the order they started waiting. */
  private readonly waiting = new Set<Paced>();
  private turn = 0;
  private turnScheduled = false;
  private unprovenHeads = UNPROVEN_HEADS_PER_TURN;
  private unprovenBytes = UNPROVEN_BYTES_PER_TURN;

  constructor(
    /** Whether a socket is still unauthorised (daemon/server/unproven-sockets.ts). */
    private readonly unproven: (socket: Socket) => boolean,
    private readonly work: WorkTracker = tracker,
  ) {}

  /**
   * Paces a socket about to be given to the HTTP server; `first` are bytes already read from it (the
   * host sorter's). Call `start` once the server has it.
   */
  adopt(socket: Socket, first?: Buffer): void {
    const p: Paced = {
      socket,
      queue: [],
      push: socket.push,
      read: socket._read,
      ended: false,
      wantsRead: false,
      blocked: false,
      released: false,
      turn: -1,
      heads: 0,
      bytes: 0,
    };
    this.paced.set(socket, p);
    if (first?.length) p.queue.push(first);
    socket.push = (chunk: Buffer | null): boolean => {
      if (chunk === null) {
        if (!p.queue.length) return p.push.call(socket, null);
        p.ended = true;
        return false;
      }
      p.queue.push(chunk);
      this.drain(p);
      // Read no more while anything waits: the kernel holds it meanwhile.
      return p.queue.length === 0 && !p.blocked;
    };
    // Bytes the socket read after the sorter paused it were buffered by the stream: they follow
    // `first`, and come before any read from now on (those come through the push above).
    if (socket.readableLength > 0) {
      const buffered = socket.read() as Buffer | null;
      if (buffered?.length) p.queue.push(buffered);
    }
    socket._read = (size: number): void => {
      p.blocked = false;
      if (!p.queue.length) return p.read.call(socket, size);
      p.wantsRead = true;
      this.wait(p);
    };
    socket.once("close", () => {
      p.queue.length = 0;
      this.waiting.delete(p);
    });
  }

  /**
   * The HTTP server has the socket: its reads now come through the intake. (Node's server reads a
   * fresh socket natively, past any JS code; a `data` listener makes it read through the stream.)
   */
  start(socket: Socket): void {
    const p = this.paced.get(socket);
    if (!p) return;
    socket.on("data", noop);
    socket.resume();
    this.drain(p);
  }

  /** The request was an upgrade: the socket leaves the intake, and what it held goes back to the stream in order. */
  release(socket: Socket): void {
    const p = this.paced.get(socket);
    if (!p || p.released) return;
    p.released = true;
    this.paced.delete(socket);
    this.waiting.delete(p);
    // Own properties over the prototype's methods: deleting them restores the socket.
    Reflect.deleteProperty(socket, "push");
    Reflect.deleteProperty(socket, "_read");
    socket.off("data", noop);
    // The server stopped the stream's flow before its 'upgrade': these wait in the stream's buffer,
    // behind the upgrade's own head once the WebSocket puts that back in front.
    for (const chunk of p.queue.splice(0)) p.push.call(socket, chunk);
    if (p.ended) p.push.call(socket, null);
  }

  /** Hands the server what this turn's budgets allow; the rest waits for a later turn. */
  private drain(p: Paced): void {
    this.openTurn();
    if (p.turn !== this.turn) Object.assign(p, { turn: this.turn, heads: 0, bytes: 0 });
    while (p.queue.length && !p.released && !p.blocked) {
      if (this.waiting.has(p)) return; // its place in the line is kept; the line moves each turn
      const unproven = this.unproven(p.socket);
      const headRoom = Math.min(HEADS_PER_CONNECTION - p.heads, unproven ? this.unprovenHeads : Number.POSITIVE_INFINITY);
      const byteRoom = unproven ? Math.min(UNPROVEN_BYTES_PER_CONNECTION - p.bytes, this.unprovenBytes) : Number.POSITIVE_INFINITY;
      if (headRoom <= 0 || byteRoom <= 0) return this.wait(p);
      const chunk = p.queue[0]!;
      // Cut before the line ending of the first head past the allowance (it goes in the next slice).
      const { end: cut, heads } = afterHeads(byteRoom < chunk.length ? chunk.subarray(0, byteRoom) : chunk, headRoom);
      const slice = cut === chunk.length ? p.queue.shift()! : chunk.subarray(0, cut);
      if (cut < chunk.length) p.queue[0] = chunk.subarray(cut);
      p.heads += heads;
      p.bytes += cut;
      if (unproven) {
        this.unprovenHeads -= heads;
        this.unprovenBytes -= cut;
      }
      // The server parses and answers what it was given right here, inside the push.
      if (!this.work.timed(INTAKE, () => p.push.call(p.socket, slice))) p.blocked = true;
    }
    if (p.queue.length || p.released) return;
    if (p.ended) {
      p.ended = false;
      p.push.call(p.socket, null);
    } else if (p.wantsRead && !p.blocked) {
      p.wantsRead = false;
      p.read.call(p.socket, 64 * 1024);
    }
  }

  private wait(p: Paced): void {
    if (p.released || p.socket.destroyed) return;
    this.waiting.add(p);
    this.openTurn();
  }

  /** Budgets are per turn: a check-phase callback opens the next one and serves the connections waiting. */
  private openTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.turn++;
      this.unprovenHeads = UNPROVEN_HEADS_PER_TURN;
      this.unprovenBytes = UNPROVEN_BYTES_PER_TURN;
      const line = [...this.waiting];
      this.waiting.clear();
      for (const p of line) {
        try {
          this.drain(p);
        } catch {
          // One connection's failure (the server threw) costs that connection, never the others in line.
          p.socket.destroy();
        }
      }
    });
  }
}

function noop(): void {}

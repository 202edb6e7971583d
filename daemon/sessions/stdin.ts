import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { Socket } from "node:net";
import { InputQueue } from "../util/input-queue.js";
import { stdinOf } from "./processes.js";

/** Between two looks at whether the command has opened the FIFO, while an eof waits for it. */
const OPEN_POLL_MS = 5;

/**
 * The stdin of a session's commands: a FIFO the driver made, which each command's line opens
 * (`<fifo`). The daemon holds it open read-write, so that open never blocks and a command blocked
 * reading it waits for jobs.input; `eof` closes the daemon's end, which is the reader's end of file.
 * Input a command left unread is dropped when it ends (its pipe is let go and the next command gets
 * a fresh one), so it never reaches the next command.
 * An eof that comes before the command's line has opened the FIFO (a client that sends its input and
 * eof at once) waits until it has: a FIFO with no writer left blocks a reader's open for good, where
 * a reader that holds it open sees end of file.
 */
export class SessionStdin {
  private socket: Socket | undefined;
  private queue: InputQueue | undefined;
  private used = false;

  constructor(
    readonly path: string,
    private readonly label: string,
    /** The shell's pid: while a command runs, its fd 0 is the FIFO. */
    private readonly shellPid: () => number | undefined,
  ) {}

  /** Opens the daemon's end, if it is not open: before each command is sent. */
  open(): void {
    if (this.socket) return;
    const fd = openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK);
    let socket: Socket;
    try {
      socket = new Socket({ fd, readable: false, writable: true });
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    socket.on("error", () => {}); // a reader that went away is the command's business
    this.socket = socket;
    this.used = false;
    this.queue = new InputQueue(
      this.label,
      (piece) => new Promise<void>((resolve, reject) => socket.write(piece, (err) => (err ? reject(err) : resolve()))),
      () => this.endOnceOpened(socket),
    );
  }

  /** jobs.input of the running command: resolves with the bytes written, -1 after its eof. */
  input(data: Buffer, eof: boolean, timeoutMs: number): Promise<number> {
    if (!this.socket || !this.queue || this.socket.writableEnded) return Promise.resolve(-1);
    this.used = true;
    return this.queue.write(data, eof, timeoutMs);
  }

  /** After a command: a pipe that was written to (or closed) is let go; the next open makes a fresh one. */
  commandEnded(): void {
    if (this.used || this.socket?.writableEnded) this.close();
  }

  /** Ends the daemon's end once the shell has the FIFO open for the command; never, if the pipe is let go first. */
  private endOnceOpened(socket: Socket): void {
    if (socket.destroyed) return;
    const pid = this.shellPid();
    if (pid === undefined || stdinOf(pid) === this.path) socket.end();
    else setTimeout(() => this.endOnceOpened(socket), OPEN_POLL_MS);
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
    this.queue = undefined;
  }
}

/** What a shell that died under a command left beside its FIFO (see driver.bash): its state file and cwd. */
export function diedUnder(fifo: string): { state: string; cwd: string } | undefined {
  try {
    const cwd = readFileSync(`${fifo}.cwd`, "utf8").split("\0")[0]!;
    return { state: `${fifo}.state`, cwd };
  } catch {
    return undefined;
  }
}

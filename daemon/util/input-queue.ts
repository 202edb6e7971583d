import { ActionError } from "../../protocol/errors.js";

/** Bytes of input that may wait for one job at once: room for the largest single request (1 Mi UTF-8 characters). */
export const INPUT_QUEUE_BYTES = 4 * 1024 * 1024;
/** Input goes to the job in pieces of a pipe's capacity, so what it has taken is known to the piece. */
const PIECE_BYTES = 64 * 1024;

/** Hands one piece to the job; resolves when the job's pipe or terminal took all of it, rejects when it never will. */
export type WritePiece = (piece: Buffer) => Promise<void>;

/**
 * A job's input, in order and with backpressure: a request is answered when the job has taken its
 * bytes, the bytes waiting are bounded (past the bound a request is refused whole), and a request
 * that the job does not take in time gives up its unwritten rest.
 */
export class InputQueue {
  private waiting = 0;
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  /**
   * A piece a timed-out request left with the job's pipe or terminal: it cannot be taken back, so
   * it stays counted in `waiting` until the job takes it, and the next piece waits for it.
   */
  private stuck: Promise<void> | undefined;

  /**
   * `end` runs after the data of a request with eof (by its deadline). A pipe's end closes it for
   * good; a terminal's (Ctrl-D) does not (`endCloses: false`): the program may read on after it.
   */
  constructor(
    private readonly jobId: string,
    private readonly writePiece: WritePiece,
    private readonly end: (deadline: number) => void | Promise<void>,
    private readonly endCloses = true,
  ) {}

  /** Writes `data` (then, with eof, ends the input); resolves with the bytes written. */
  write(data: Buffer, eof: boolean, timeoutMs: number): Promise<number> {
    if (this.closed) return Promise.resolve(-1);
    if (this.waiting > 0 && this.waiting + data.length > INPUT_QUEUE_BYTES) {
      const mib = INPUT_QUEUE_BYTES / (1024 * 1024);
      return Promise.reject(
        new ActionError(
          "limit_exceeded",
          `job ${this.jobId} has ${this.waiting} bytes of earlier input it has not read yet, and at most ${mib} MiB may wait; wait for the replies to earlier jobs.input before sending more`,
          {
            path: "/data",
            details: { waiting: this.waiting },
          },
        ),
      );
    }
    if (eof && this.endCloses) this.closed = true;
    this.waiting += data.length;
    const deadline = Date.now() + timeoutMs;
    const run = this.tail.then(() => this.deliver(data, eof, deadline));
    this.tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  private async deliver(data: Buffer, eof: boolean, deadline: number): Promise<number> {
    let written = 0;
    let leftInFlight = 0;
    try {
      while (written < data.length) {
        // A copy: a piece left in flight must not keep the whole request's buffer alive.
        const piece = Buffer.from(data.subarray(written, written + PIECE_BYTES));
        let left = deadline - Date.now();
        const earlierTaken = !this.stuck || (left > 0 && (await this.withDeadline(this.stuck, left)));
        left = deadline - Date.now();
        let taken = false;
        if (earlierTaken && left > 0) {
          const writing = this.writePiece(piece);
          taken = await this.withDeadline(writing, left);
          if (!taken) {
            leftInFlight = piece.length;
            this.stuck = writing
              .catch(() => undefined)
              .finally(() => {
                this.waiting -= piece.length;
                this.stuck = undefined;
              });
          }
        }
        if (!taken) {
          throw new ActionError(
            "conflict",
            `job ${this.jobId} is not reading its input: it took ${written} of ${data.length} bytes in time; the rest was not written (up to ${PIECE_BYTES / 1024} KiB of it may still reach the job)${eof ? " and its input stays open" : ""}`,
            { path: "/data", details: { written } },
          );
        }
        written += piece.length;
        this.waiting -= piece.length;
      }
      if (eof) await this.end(deadline);
      return written;
    } catch (err) {
      if (err instanceof ActionError) throw err;
      throw new ActionError(
        "conflict",
        `job ${this.jobId} stopped reading its input (${(err as Error).message}) after ${written} of ${data.length} bytes`,
        {
          path: "/job",
          details: { written },
        },
      );
    } finally {
      this.waiting -= data.length - written - leftInFlight;
      if (eof && this.endCloses && written < data.length) this.closed = false;
    }
  }

  /** True when `write` settled within `ms`; a rejection passes through. */
  private withDeadline(write: Promise<void>, ms: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(false), ms);
      write.then(
        () => {
          clearTimeout(timer);
          resolve(true);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }
}

import { closeSync, constants as fsConstants, openSync, write } from "node:fs";
import { constants } from "node:os";
import { spawn } from "node-pty";
import type { RunContext } from "./context.js";
import { notStarted, type ProcessControl, type ProcessExit, type ProcessSpec } from "./process.js";
import { InputQueue, type WritePiece } from "../util/input-queue.js";
import { untilReading } from "./pty-reader.js";
import { raiseOomScore, reapMarked, signalGroup, terminateGroup } from "../process/index.js";

/**
 * How long a terminal's stdin string may wait to be typed and for its program to read before the
 * Ctrl-D goes anyway (it is then read as end of input when the program gets to it, in line mode).
 */
const STDIN_STRING_MS = 10 * 60 * 1000;

/** While the terminal's input buffer is full, how often to try again (doubling up to the last). */
const RETRY_MS = [1, 2, 5, 10, 20, 50];

/**
 * Writes to the terminal in order and says when the terminal took the bytes: node-pty's own write
 * queues without limit and never tells. The master fd is non-blocking, so a full buffer answers
 * EAGAIN and we try again shortly (node-pty retries on every turn of the event loop instead).
 */
function terminalWriter(term: ReturnType<typeof spawn>, ended: Promise<unknown>): WritePiece {
  const fd = (term as unknown as { fd?: unknown }).fd;
  let exited = false;
  void ended.then(() => (exited = true));
  let chain: Promise<void> = Promise.resolve();
  const writeAll = async (piece: Buffer): Promise<void> => {
    if (typeof fd !== "number") return term.write(piece.toString("utf8")); // not the Unix terminal we know: no backpressure
    let offset = 0;
    let attempt = 0;
    while (offset < piece.length) {
      if (exited) throw new Error("the terminal has closed");
      try {
        offset += await new Promise<number>((resolve, reject) =>
          write(fd, piece, offset, piece.length - offset, null, (err, n) => (err ? reject(err) : resolve(n))),
        );
        attempt = 0;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]));
      }
    }
  };
  return (piece) => {
    const next = chain.then(() => writeAll(piece));
    chain = next.catch(() => {});
    return next;
  };
}

/**
 * Opens the terminal's slave side in the daemon too. Linux hands bytes the job wrote last to the
 * master asynchronously; when the job's exit closes the last slave descriptor, the master read
 * can fail (EIO) before they arrive, and node-pty then closes the terminal and loses them (seen:
 * 4 of 120 short jobs lost their last line). While we hold the slave, the master never sees EIO:
 * node-pty reads on until its post-exit grace (200 ms) and only then closes.
 */
function holdSlave(path: string | undefined): number | undefined {
  if (path === undefined || !path.startsWith("/dev/")) return undefined;
  try {
    return openSync(path, fsConstants.O_RDWR | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK);
  } catch {
    return undefined; // no worse than before: only the last bytes are at risk
  }
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n as number, name]));

/**
 * Runs a command in a terminal (node-pty). The child leads its own session, so its pid is its
 * process group; everything it prints arrives as the "pty" stream.
 */
export function startPty(
  spec: ProcessSpec & { cols: number; rows: number },
  ctx: RunContext,
): { control: ProcessControl; done: Promise<ProcessExit> } {
  const [file, ...args] = spec.argv;
  let term: ReturnType<typeof spawn>;
  try {
    term = spawn(file!, args, {
      name: spec.env.TERM ?? "xterm-256color",
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env: spec.env,
      encoding: null,
    } as Parameters<typeof spawn>[2]);
  } catch (err) {
    return notStarted(file!, err as NodeJS.ErrnoException);
  }
  raiseOomScore(term.pid);
  // node-pty keeps the slave's path (/dev/pts/N) in a private field.
  const slavePath = (term as unknown as { _pty?: unknown })._pty;
  const ttyPath = typeof slavePath === "string" ? slavePath : undefined;
  const slave = holdSlave(ttyPath);
  let lastOutputAt = Date.now();
  term.onData((data: string | Buffer) => {
    lastOutputAt = Date.now();
    ctx.output("pty", typeof data === "string" ? Buffer.from(data) : data);
  });

  const onAbort = (): void => {
    signalGroup(term.pid, "SIGKILL");
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  const done = new Promise<ProcessExit>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      if (slave !== undefined) closeSync(slave);
      ctx.signal.removeEventListener("abort", onAbort);
      terminateGroup(term.pid); // background children left in its group
      if (spec.jobId !== undefined) reapMarked(spec.jobId);
      if (signal) resolve({ signal: SIGNAL_NAMES.get(signal) ?? `SIG${signal}` });
      else resolve({ exitCode });
    });
  });

  const writer = terminalWriter(term, done);
  // eof is Ctrl-D, sent once the program waits for input (see untilReading); the terminal stays open.
  const ctrlD = async (deadline: number): Promise<void> => {
    await untilReading(term.pid, ttyPath, () => lastOutputAt, deadline);
    await writer(Buffer.from("\x04"));
  };
  const input = new InputQueue(spec.jobId ?? String(term.pid), writer, ctrlD, false);
  // A stdin string is typed, then ends with Ctrl-D as jobs.input's eof does: once the program reads.
  if (typeof spec.stdin === "string") {
    input.write(Buffer.from(spec.stdin), true, STDIN_STRING_MS).catch((err: unknown) => {
      // The program ended, or never read it all in time: the job's own output and status tell.
      ctx.log.debug({ err: (err as Error).message }, "the terminal did not take its stdin string");
    });
  }
  const control: ProcessControl = {
    pid: term.pid,
    input: (data, eof, timeoutMs) => input.write(data, eof, timeoutMs),
    kill(signal) {
      signalGroup(term.pid, signal);
    },
    resize(cols, rows) {
      term.resize(cols, rows);
    },
    pause: () => term.pause(),
    resume: () => term.resume(),
  };
  return { control, done };
}

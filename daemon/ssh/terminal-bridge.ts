import type { ServerChannel } from "ssh2";
import type { Outflow } from "./outflow.js";

/** The side of a terminal a channel drives: its input, its size, and its output's flow. */
export interface TerminalSide {
  input?(data: Buffer, eof: boolean, timeoutMs: number): Promise<number>;
  resize?(cols: number, rows: number): void;
  pause?(): void;
  resume?(): void;
}

/** How long one piece of typed input may wait for the terminal to take it before it is dropped. */
const INPUT_TIMEOUT_MS = 60_000;

/**
 * Joins a channel to a terminal with backpressure both ways: the channel is paused while the
 * terminal has not taken the last piece (so the client's window stays shut), and the terminal's
 * output is paused while the connection has no room for it (`outflow`). Returns the output writer.
 */
export function bridgeTerminal(channel: ServerChannel, side: () => TerminalSide, outflow: Outflow): (data: Buffer) => void {
  channel.on("data", (data: Buffer) => {
    const input = side().input;
    if (!input) return;
    channel.pause();
    input(data, false, INPUT_TIMEOUT_MS)
      .catch(() => -1)
      .finally(() => channel.resume());
  });
  channel.on(
    "end",
    () =>
      void side()
        .input?.(Buffer.alloc(0), true, INPUT_TIMEOUT_MS)
        .catch(() => -1),
  );
  let paused = false;
  const resume = (): void => {
    if (!paused) return;
    paused = false;
    side().resume?.();
  };
  return (data) => {
    if (outflow.write(channel, data, resume) || paused) return;
    paused = true;
    side().pause?.();
  };
}

import { displayText } from "../display.js";

/** The writable side of a terminal stream, as LiveLine needs it. */
export interface TermStream {
  write(chunk: string | Uint8Array): boolean;
  isTTY?: boolean;
  columns?: number;
}

const CLEAR = "\r\u001b[2K";

/**
 * One status line (a progress bar) redrawn in place on a terminal. Job output written through
 * `output` clears the bar first and redraws it after a complete line, so the two never share a
 * line; while output has left a line unfinished the bar waits.
 */
export class LiveLine {
  private shown = false;
  private midLine = false;
  private text = "";

  constructor(private readonly term: TermStream) {}

  /** Draws (or redraws) the status line, cut to the terminal's width. */
  draw(raw: string): void {
    const text = displayText(raw); // progress messages come from the job (Nix's output)
    const width = (this.term.columns ?? 100) - 1;
    this.text = text.length > width ? `${text.slice(0, width - 1)}…` : text;
    if (this.midLine) return;
    this.term.write(`${CLEAR}${this.text}`);
    this.shown = true;
  }

  /** Writes job output to `stream`, keeping it off the status line. */
  output(stream: TermStream, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (stream.isTTY !== true) {
      stream.write(bytes);
      return;
    }
    this.clear();
    stream.write(bytes);
    this.midLine = bytes[bytes.length - 1] !== 0x0a;
    if (!this.midLine && this.text) this.draw(this.text);
  }

  /** Removes the status line (before the final summary). */
  clear(): void {
    if (this.shown) this.term.write(CLEAR);
    this.shown = false;
  }
}

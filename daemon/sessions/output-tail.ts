/** Bytes of a command's latest output kept for its last line. */
const TAIL_BYTES = 1024;
/** A last line as status shows it, at most. */
const LINE_CHARS = 200;
// Colour and cursor sequences, and carriage returns: what a terminal would not show as text.
const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\r/g;

/** The end of a command's output, for `lastLine` (a prompt such as `Password:`) and prompt detection. */
export class OutputTail {
  private tail = Buffer.alloc(0);

  add(data: Buffer): void {
    this.tail = data.length >= TAIL_BYTES ? Buffer.from(data.subarray(data.length - TAIL_BYTES)) : Buffer.concat([this.tail, data]);
    if (this.tail.length > TAIL_BYTES) this.tail = this.tail.subarray(this.tail.length - TAIL_BYTES);
  }

  reset(): void {
    this.tail = Buffer.alloc(0);
  }

  /** Whether the output so far ends inside a line (a prompt waits there: `Ok to proceed? (y) `). */
  get endsMidLine(): boolean {
    return this.tail.length > 0 && this.tail[this.tail.length - 1] !== 0x0a;
  }

  /** The last line with text, without escape sequences, cut to LINE_CHARS. */
  lastLine(): string {
    const lines = this.tail.toString("utf8").replace(ESCAPES, "").split("\n");
    const line = ([...lines].reverse().find((l) => l.trim() !== "") ?? "").trimEnd();
    return line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line;
  }
}

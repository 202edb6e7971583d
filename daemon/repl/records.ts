/** Builds a decoder for one child's messages channel: `emit` each message, `fail` once on a protocol error. */
export type DecoderFactory<M> = (emit: (message: M) => void, fail: (error: Error) => void) => Decoder;

/** Takes the channel's bytes as they arrive. */
export interface Decoder {
  push(chunk: Buffer): void;
}

/**
 * Splits a byte stream into records that end in `delimiter` (a newline for NDJSON, a NUL for the
 * bash driver's fields), each at most `maxBytes` long without its delimiter. A longer one is a
 * protocol error: reported once through `fail`, and nothing after it is read, since the framing
 * can no longer be trusted. Memory is bounded by `maxBytes` per channel.
 */
export class RecordSplitter implements Decoder {
  private parts: Buffer[] = [];
  private held = 0;
  private failed = false;

  constructor(
    private readonly delimiter: number,
    private readonly maxBytes: number,
    private readonly emit: (record: Buffer) => void,
    private readonly fail: (error: Error) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.failed) {
      const end = chunk.indexOf(this.delimiter, start);
      const piece = chunk.subarray(start, end < 0 ? chunk.length : end);
      if (this.held + piece.length > this.maxBytes) return this.overflow();
      if (end < 0) {
        if (piece.length) {
          this.parts.push(piece);
          this.held += piece.length;
        }
        return;
      }
      const record = this.parts.length ? Buffer.concat([...this.parts, piece]) : piece;
      this.parts = [];
      this.held = 0;
      this.emit(record);
      start = end + 1;
    }
  }

  private overflow(): void {
    this.failed = true;
    this.parts = [];
    this.held = 0;
    this.fail(new Error(`a message on the child's channel is longer than ${this.maxBytes} bytes`));
  }
}

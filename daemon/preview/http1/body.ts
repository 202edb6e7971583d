import { HeadError, type RequestHead, type ResponseHead } from "./head.js";

/**
 * Where a message body ends (RFC 9112 §6): the proxy forwards body bytes as they come and only
 * finds the end, so a keep-alive connection's next message starts exactly where the app's or the
 * client's parser will start it. `scan` returns the index in `chunk` just past the body's last
 * byte, or -1 when the whole rest of the chunk is body.
 */
export interface BodyEnd {
  readonly kind: "none" | "length" | "chunked" | "close";
  scan(chunk: Buffer, from: number): number;
}

const NONE: BodyEnd = { kind: "none", scan: (_chunk, from) => from };

class FixedLength implements BodyEnd {
  readonly kind = "length";
  constructor(private remaining: number) {}
  scan(chunk: Buffer, from: number): number {
    const available = chunk.length - from;
    if (available < this.remaining) {
      this.remaining -= available;
      return -1;
    }
    const end = from + this.remaining;
    this.remaining = 0;
    return end;
  }
}

/** A body that ends when the app closes its connection (a response without a length). */
class UntilClose implements BodyEnd {
  readonly kind = "close";
  scan(): number {
    return -1;
  }
}

const CR = 13;
const LF = 10;
/** A chunk-size line (size and extensions) or a trailer line longer than this is refused. */
const MAX_LINE = 4096;
const MAX_CHUNK_DIGITS = 13; // under 2^53

enum State {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  Trailer,
  TrailerLf,
  EndLf,
  Done,
}

function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  const lower = byte | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/** The chunked coding, read strictly: hex sizes, CRLF only, bounded lines; data is skipped over, not looked at. */
class Chunked implements BodyEnd {
  readonly kind = "chunked";
  private state = State.Size;
  private size = 0;
  private digits = 0;
  private line = 0;

  constructor(private readonly status: 400 | 502) {}

  private fail(why: string): never {
    throw new HeadError(this.status, `malformed chunked body: ${why}`);
  }

  scan(chunk: Buffer, from: number): number {
    let i = from;
    const n = chunk.length;
    while (i < n) {
      switch (this.state) {
        case State.Data: {
          const take = Math.min(this.size, n - i);
          this.size -= take;
          i += take;
          if (this.size === 0) this.state = State.DataCr;
          continue;
        }
        case State.Size: {
          const byte = chunk[i]!;
          const hex = hexValue(byte);
          if (hex >= 0) {
            if (++this.digits > MAX_CHUNK_DIGITS) this.fail("chunk size too large");
            this.size = this.size * 16 + hex;
          } else if (this.digits === 0) this.fail("a chunk size is not hexadecimal");
          else if (byte === CR) this.state = State.SizeLf;
          else if (byte === 59 /* ; */) this.state = State.Extension;
          else this.fail("unexpected byte after a chunk size");
          break;
        }
        case State.Extension: {
          const byte = chunk[i]!;
          if (byte === CR) this.state = State.SizeLf;
          else if ((byte < 32 && byte !== 9) || byte === 127) this.fail("a control character in a chunk extension");
          else if (++this.line > MAX_LINE) this.fail("a chunk extension too long");
          break;
        }
        case State.SizeLf:
          if (chunk[i] !== LF) this.fail("a chunk size line not ended by CRLF");
          this.line = 0;
          this.digits = 0;
          this.state = this.size === 0 ? State.TrailerStart : State.Data;
          break;
        case State.DataCr:
          if (chunk[i] !== CR) this.fail("chunk data longer than its size");
          this.state = State.DataLf;
          break;
        case State.DataLf:
          if (chunk[i] !== LF) this.fail("chunk data not ended by CRLF");
          this.state = State.Size;
          break;
        case State.TrailerStart:
          if (chunk[i] === CR) this.state = State.EndLf;
          else {
            this.state = State.Trailer;
            continue;
          }
          break;
        case State.Trailer: {
          const byte = chunk[i]!;
          if (byte === CR) this.state = State.TrailerLf;
          else if (byte === LF || ++this.line > MAX_LINE) this.fail("a malformed trailer line");
          break;
        }
        case State.TrailerLf:
          if (chunk[i] !== LF) this.fail("a trailer line not ended by CRLF");
          this.line = 0;
          this.state = State.TrailerStart;
          break;
        case State.EndLf:
          if (chunk[i] !== LF) this.fail("the last chunk not ended by CRLF");
          this.state = State.Done;
          return i + 1;
        case State.Done:
          return i;
      }
      i++;
    }
    return this.state === State.Done ? i : -1;
  }
}

function contentLength(value: string | undefined, status: 400 | 502): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,15}$/.test(value)) return Number(value);
  // Repeated or listed lengths are accepted only when they all agree (RFC 9110 §8.6).
  const lengths = new Set(value.split(",").map((v) => v.trim()));
  const [only] = lengths;
  if (lengths.size !== 1 || !/^\d{1,15}$/.test(only!)) throw new HeadError(status, "Content-Length is not one decimal length");
  return Number(only);
}

/** How a request's body ends. A Transfer-Encoding other than chunked, or one beside a Content-Length, is refused. */
export function requestBodyEnd(head: RequestHead): BodyEnd {
  const length = contentLength(head.contentLength, 400);
  if (head.transferEncoding !== undefined) {
    if (length !== undefined) throw new HeadError(400, "a request with both Transfer-Encoding and Content-Length is refused");
    if (head.transferEncoding.trim().toLowerCase() !== "chunked")
      throw new HeadError(501, "a request Transfer-Encoding other than chunked");
    return new Chunked(400);
  }
  return length ? new FixedLength(length) : NONE;
}

/** How a response's body ends, given the request's method (RFC 9112 §6.3). */
export function responseBodyEnd(head: ResponseHead, method: string): BodyEnd {
  if (method === "HEAD" || head.status < 200 || head.status === 204 || head.status === 304) return NONE;
  if (head.transferEncoding !== undefined) {
    const last = head.transferEncoding.split(",").pop()!.trim().toLowerCase();
    return last === "chunked" ? new Chunked(502) : new UntilClose();
  }
  const length = contentLength(head.contentLength, 502);
  if (length === undefined) return new UntilClose();
  return length ? new FixedLength(length) : NONE;
}

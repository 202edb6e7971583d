import { isUtf8 } from "node:buffer";
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { Encoding } from "../../protocol/common.js";
import { ActionError } from "../../protocol/errors.js";
import type { FilesDataHeader } from "../../protocol/events.js";
import { completeUtf8Length } from "../jobs/utf8.js";
import { openRegularFile } from "../util/regular-file.js";
import type { BackgroundHashes } from "./hash.js";

export const DEFAULT_READ_LIMIT = 1024 * 1024;
/** Files up to this size get their SHA-256 on the last reply unasked (hashing them takes well under a second). */
export const AUTO_HASH_MAX_BYTES = 64 * 1024 * 1024;

export interface ReadRequest {
  offset?: number;
  limit?: number;
  encoding?: Encoding;
  binary?: boolean;
  /** true: the whole file's SHA-256 on the reply reaching the end, whatever the size; false: never. */
  sha256?: boolean;
}

export interface ReadSlice {
  data: string;
  encoding: Encoding | "binary";
  size: number;
  mtime: string;
  offset: number;
  next: number;
  eof: boolean;
  sha256?: string;
}

const reopen = async (path: string) => (await openRegularFile(path)).handle;

/** Reads up to `want` bytes at `offset` into a new buffer, after `start` bytes left free for a frame header. */
async function readAt(handle: FileHandle, offset: number, want: number, start: number): Promise<{ buffer: Buffer; got: number }> {
  const buffer = Buffer.allocUnsafe(start + want);
  let got = 0;
  while (got < want) {
    const { bytesRead } = await handle.read(buffer, start + got, want - got, offset + got);
    if (bytesRead === 0) break; // shrank meanwhile: what we have is what there is
    got += bytesRead;
  }
  return { buffer, got };
}

/**
 * The bytes as JSON text or base64. Text that does not reach the end is cut at a character
 * boundary (the rest comes next time); bytes that are not text go whole, as base64.
 */
function encodeSlice(
  bytes: Buffer,
  encoding: Encoding | undefined,
  more: boolean,
  real: string,
  offset: number,
): { data: string; encoding: Encoding; length: number } {
  if (encoding === "base64") return { data: bytes.toString("base64"), encoding, length: bytes.length };
  const text = more ? bytes.subarray(0, completeUtf8Length(bytes) || bytes.length) : bytes;
  if (isUtf8(text)) return { data: text.toString("utf8"), encoding: "utf8", length: text.length };
  if (encoding === "utf8") {
    throw new ActionError(
      "invalid_request",
      `${real} is not valid UTF-8 between bytes ${offset} and ${offset + bytes.length}; read it with encoding "base64"`,
      { path: "/encoding" },
    );
  }
  return { data: bytes.toString("base64"), encoding: "base64", length: bytes.length };
}

/**
 * Reads one slice of a regular file (never a FIFO or device: openRegularFile refuses them before
 * opening). The reply that reaches the end carries the whole file's SHA-256 when the file is
 * small or the request asks (started in the background by an earlier slice; `hashes` is the
 * connection's, so its end stops them). `check` may refuse the opened file. With `binary`, the
 * bytes are read straight into the frame that carries them (`frame`, for the caller to send
 * after the reply) and `data` is empty.
 */
export async function readSlice(
  real: string,
  request: ReadRequest,
  hashes: BackgroundHashes,
  check: (st: Stats) => Promise<void>,
): Promise<ReadSlice & { frame?: Buffer }> {
  const { handle, stats } = await openRegularFile(real);
  try {
    await check(stats);
    const offset = Math.min(request.offset ?? 0, stats.size);
    const want = Math.min(request.limit ?? DEFAULT_READ_LIMIT, stats.size - offset);
    const header = request.binary
      ? Buffer.from(JSON.stringify({ event: "files.data", path: real, offset } satisfies FilesDataHeader))
      : undefined;
    const start = header ? 4 + header.length : 0;
    const { buffer, got } = await readAt(handle, offset, want, start);
    let frame: Buffer | undefined;
    let encoded: { data: string; encoding: Encoding | "binary"; length: number };
    if (header) {
      buffer.writeUInt32BE(header.length, 0);
      header.copy(buffer, 4);
      frame = buffer.subarray(0, start + got);
      encoded = { data: "", encoding: "binary", length: got };
    } else encoded = encodeSlice(buffer.subarray(0, got), request.encoding, offset + got < stats.size, real, offset);
    const next = offset + encoded.length;
    const eof = next >= stats.size;
    const hashed = request.sha256 ?? stats.size <= AUTO_HASH_MAX_BYTES;
    if (!eof && hashed) hashes.start(real, stats, reopen);
    const sha256 = eof && hashed ? await hashes.digest(stats, handle) : undefined;
    return {
      data: encoded.data,
      encoding: encoded.encoding,
      size: stats.size,
      mtime: stats.mtime.toISOString(),
      offset,
      next,
      eof,
      ...(sha256 ? { sha256 } : {}),
      ...(frame ? { frame } : {}),
    };
  } finally {
    await handle.close();
  }
}

import { isUtf8 } from "node:buffer";
import type { Encoding } from "../../protocol/common.js";
import { ActionError } from "../../protocol/errors.js";
import { completeUtf8Length, encodeBytes } from "../jobs/utf8.js";
import { openRegularFile } from "../util/regular-file.js";
import { BackgroundHashes } from "./hash.js";

export const DEFAULT_READ_LIMIT = 1024 * 1024;

export interface ReadRequest {
  offset?: number;
  limit?: number;
  encoding?: Encoding;
  binary?: boolean;
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

const hashes = new BackgroundHashes();
const reopen = async (path: string) => (await openRegularFile(path)).handle;

/**
 * Reads one slice of a regular file (never a FIFO or device: openRegularFile refuses them before
 * opening). Text is cut at a character boundary when more follows; the reply that reaches the
 * end carries the whole file's SHA-256 (started in the background by the first slice).
 */
export async function readSlice(real: string, request: ReadRequest): Promise<ReadSlice & { frame?: Buffer }> {
  const { handle, stats } = await openRegularFile(real);
  try {
    const offset = Math.min(request.offset ?? 0, stats.size);
    const want = Math.min(request.limit ?? DEFAULT_READ_LIMIT, stats.size - offset);
    // Binary: the bytes are read straight into the frame that carries them, after its header.
    const head = request.binary ? Buffer.from(JSON.stringify({ event: "files.data", path: real, offset })) : undefined;
    const start = head ? 4 + head.length : 0;
    const buffer = Buffer.allocUnsafe(start + want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await handle.read(buffer, start + got, want - got, offset + got);
      if (bytesRead === 0) break; // shrank meanwhile: what we have is what there is
      got += bytesRead;
    }
    if (head) {
      buffer.writeUInt32BE(head.length, 0);
      head.copy(buffer, 4);
      const next = offset + got;
      const eof = next >= stats.size;
      if (!eof) hashes.start(real, stats, reopen);
      const sha256 = eof ? await hashes.digest(stats, handle) : undefined;
      const frame = buffer.subarray(0, start + got);
      return { data: "", encoding: "binary", size: stats.size, mtime: stats.mtime.toISOString(), offset, next, eof, ...(eof ? { sha256 } : {}), frame };
    }
    let bytes = buffer.subarray(0, got);
    if (request.encoding !== "base64" && offset + got < stats.size) {
      const usable = completeUtf8Length(bytes);
      if (usable > 0) bytes = bytes.subarray(0, usable);
    }
    const next = offset + bytes.length;
    const eof = next >= stats.size;
    let encoded: { data: string; encoding: Encoding };
    if (request.encoding === "base64") encoded = { data: bytes.toString("base64"), encoding: "base64" };
    else if (request.encoding === "utf8") {
      if (!isUtf8(bytes)) throw new ActionError("invalid_request", `${real} is not valid UTF-8 between bytes ${offset} and ${next}; read it with encoding "base64"`, { path: "/encoding" });
      encoded = { data: bytes.toString("utf8"), encoding: "utf8" };
    } else encoded = encodeBytes(bytes);
    if (!eof) hashes.start(real, stats, reopen);
    const sha256 = eof ? await hashes.digest(stats, handle) : undefined;
    return { ...encoded, size: stats.size, mtime: stats.mtime.toISOString(), offset, next, eof, ...(eof ? { sha256 } : {}) };
  } finally {
    await handle.close();
  }
}

import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { createGunzip } from "node:zlib";
import xz from "xz-decompress";
import type { ArchiveFormat } from "./sniff.js";
import { zstdChunks } from "./zstd-stream.js";

/**
 * The decompressed tar stream of a tar, tar.gz, tar.xz or tar.zst archive. gzip uses Node's zlib;
 * xz uses xz-decompress (xz-embedded compiled to WASM, pull-based so it follows backpressure);
 * zstd uses fzstd (pure JS) one block at a time, behind a guard that refuses oversized windows and
 * block structures whose decoding cost explodes (zstd-stream.ts). Neither needs a
 * native addon or an external binary; xz-decompress has its own dictionary limit (between 64 and
 * 256 MiB), and an archive over it is refused as damaged.
 */

/** Wraps the compressed `source` in the decoder for `format`; errors on either side end both. */
export function decompressedTar(format: Exclude<ArchiveFormat, "zip">, source: Readable): Readable {
  switch (format) {
    case "tar":
      return source;
    case "tar.gz": {
      const gunzip = createGunzip({ chunkSize: 64 * 1024 });
      source.on("error", (err) => gunzip.destroy(err));
      gunzip.on("close", () => source.destroy());
      return source.pipe(gunzip);
    }
    case "tar.xz": {
      const web = Readable.toWeb(source) as unknown as ReadableStream<Uint8Array>;
      return Readable.fromWeb(new xz.XzReadableStream(web) as unknown as WebReadableStream<Uint8Array>);
    }
    case "tar.zst": {
      const out = Readable.from(zstdChunks(source), { objectMode: false });
      out.on("close", () => source.destroy());
      return out;
    }
  }
}

import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { createGunzip } from "node:zlib";
import { Decompress as ZstdDecompress } from "fzstd";
import xz from "xz-decompress";
import type { ArchiveFormat } from "./sniff.js";

/**
 * The decompressed tar stream of a tar, tar.gz, tar.xz or tar.zst archive. gzip uses Node's zlib;
 * xz uses xz-decompress (xz-embedded compiled to WASM, pull-based so it follows backpressure);
 * zstd uses fzstd (pure JS). Neither needs a native addon or an external binary.
 */

/**
 * fzstd decodes everything it is handed synchronously, and one RLE block of 4 bytes can expand
 * to 128 KiB; feeding at most this many compressed bytes per call bounds one burst to ~32 MiB.
 */
const ZSTD_SLICE_BYTES = 1024;

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

async function* zstdChunks(source: Readable): AsyncGenerator<Uint8Array> {
  const ready: Uint8Array[] = [];
  const decoder = new ZstdDecompress((chunk) => {
    if (chunk.length > 0) ready.push(chunk);
  });
  for await (const chunk of source as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i += ZSTD_SLICE_BYTES) {
      decoder.push(chunk.subarray(i, i + ZSTD_SLICE_BYTES));
      while (ready.length > 0) yield ready.shift()!;
    }
  }
  decoder.push(new Uint8Array(0), true);
  while (ready.length > 0) yield ready.shift()!;
}

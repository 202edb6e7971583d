import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { createGunzip } from "node:zlib";
import { Decompress as ZstdDecompress } from "fzstd";
import xz from "xz-decompress";
import type { ArchiveFormat } from "./sniff.js";
import { ZstdWindowGuard } from "./zstd-guard.js";

/**
 * The decompressed tar stream of a tar, tar.gz, tar.xz or tar.zst archive. gzip uses Node's zlib;
 * xz uses xz-decompress (xz-embedded compiled to WASM, pull-based so it follows backpressure);
 * zstd uses fzstd (pure JS), behind a guard that refuses oversized windows. Neither needs a
 * native addon or an external binary; xz-decompress has its own dictionary limit (between 64 and
 * 256 MiB), and an archive over it is refused as damaged.
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
  const guard = new ZstdWindowGuard();
  const decoder = new ZstdDecompress((chunk) => {
    if (chunk.length > 0) ready.push(chunk);
  });
  for await (const chunk of source as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i += ZSTD_SLICE_BYTES) {
      const slice = chunk.subarray(i, i + ZSTD_SLICE_BYTES);
      guard.scan(slice);
      decoder.push(slice);
      while (ready.length > 0) yield ready.shift()!;
    }
  }
  decoder.push(new Uint8Array(0), true);
  while (ready.length > 0) yield ready.shift()!;
}

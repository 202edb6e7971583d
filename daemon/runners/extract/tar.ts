import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract as tarExtract, type Header } from "tar-stream";
import { ActionError } from "../../../protocol/errors.js";
import type { ExtractionBudget } from "./budget.js";
import { refuseEntry, safeEntryPath, wrapWriteError } from "./entry-path.js";
import { Pacer } from "./pacer.js";
import type { TreeWriter } from "./tree-writer.js";

/**
 * Walks a decompressed tar stream entry by entry: regular files and directories are written,
 * everything else (symlinks, hardlinks, devices, FIFOs, unknown types) refuses the archive.
 */

const REFUSED_KIND: Record<string, string> = {
  symlink: "symbolic links are not extracted",
  link: "hard links are not extracted",
  "character-device": "character devices are not extracted",
  "block-device": "block devices are not extracted",
  fifo: "FIFOs are not extracted",
};

/** Extracts every entry of `tarStream` (already decompressed) through `writer`. */
export async function extractTarStream(
  tarStream: Readable,
  writer: TreeWriter,
  budget: ExtractionBudget,
  strip: number,
  signal: AbortSignal,
): Promise<void> {
  // Pre-POSIX headers are accepted: every entry is checked here, whatever its header format.
  const extract = tarExtract({ filenameEncoding: "utf-8", allowUnknownFormat: true } as Parameters<typeof tarExtract>[0]);
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        budget.addStreamBytes(chunk.length);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  });
  const feeding = pipeline(tarStream, meter, extract, { signal });
  const pacer = new Pacer();
  const consuming = (async () => {
    for await (const entry of extract) {
      await pacer.turn();
      const h: Partial<Header> & { name: string } = entry.header;
      budget.addEntry(h.name);
      const kind = h.type ?? "unknown";
      if (kind !== "file" && kind !== "contiguous-file" && kind !== "directory") {
        throw refuseEntry(h.name, REFUSED_KIND[kind] ?? `entries of type ${kind} are not extracted`);
      }
      const rel = safeEntryPath(h.name, strip);
      if (rel === null) {
        entry.resume();
        continue;
      }
      if (kind === "directory") {
        entry.resume();
        await writer.directory(rel, h.mode, h.mtime).catch((err: unknown) => {
          throw wrapWriteError(h.name, err);
        });
      } else {
        await writer
          .file(rel, entry as AsyncIterable<Buffer>, h.mode, h.mtime, (n) => budget.addBytes(h.name, n))
          .catch((err: unknown) => {
            throw wrapWriteError(h.name, err);
          });
      }
    }
  })();
  // A failure on either side tears the other down, and the torn-down side then fails too (often
  // with a bare "Premature close"); our own refusal, wherever it was raised, is the error that counts.
  const [fed, consumed] = await Promise.allSettled([
    feeding,
    consuming.catch((err: unknown) => {
      extract.destroy(err as Error);
      throw err;
    }),
  ]);
  const failures = [consumed, fed].flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (failures.length > 0) throw failures.find((e) => e instanceof ActionError) ?? failures[failures.length - 1];
}

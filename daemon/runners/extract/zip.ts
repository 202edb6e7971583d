import type { Readable } from "node:stream";
import { inflateRawSync } from "node:zlib";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import type { ExtractionBudget } from "./budget.js";
import { refuseArchive, refuseEntry, safeEntryPath, wrapWriteError } from "./entry-path.js";
import { Pacer } from "./pacer.js";
import type { TreeWriter } from "./tree-writer.js";
import { openWindowedReader, type WindowedReader } from "./zip-reader.js";

/**
 * Extracts a zip with yauzl: entries are read one at a time (lazyEntries), names are decoded and
 * checked here (not by yauzl, so the refusal names the entry), and yauzl's validateEntrySizes
 * makes an entry whose data inflates to more or fewer bytes than its headers say an error.
 * Small deflated entries are inflated in one synchronous call with the same size check (and an
 * output cap of the declared size + 1, so a lying header cannot make it allocate more).
 */

/** Entries whose declared sizes are both at most this are read whole and inflated in one call. */
const SMALL_ENTRY_BYTES = 256 * 1024;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const UNIX_HOST = 3;
const DOS_DIRECTORY = 0x10;

const SPECIAL_KIND: Record<number, string> = {
  [S_IFLNK]: "symbolic links are not extracted",
  0o020000: "character devices are not extracted",
  0o060000: "block devices are not extracted",
  0o010000: "FIFOs are not extracted",
  0o140000: "sockets are not extracted",
};

type DecodeName = (flags: number, raw: Buffer, extraFields: Entry["extraFields"], strict: boolean) => string;
const decodeLowLevel = (yauzl as unknown as { getFileNameLowLevel: DecodeName }).getFileNameLowLevel;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const UTF8_FLAG = 0x800;
const UNICODE_PATH_FIELD = 0x7075;

/**
 * The entry's name. The zip spec says "CP437 unless flagged UTF-8", but Info-ZIP on Unix writes raw
 * UTF-8 bytes without the flag; like unzip, names that are valid UTF-8 are read as UTF-8.
 */
function decodeName(entry: Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  const flagged = (entry.generalPurposeBitFlag & UTF8_FLAG) !== 0 || entry.extraFields.some((f) => f.id === UNICODE_PATH_FIELD);
  if (!flagged) {
    try {
      return strictUtf8.decode(raw).replace(/\\/g, "/");
    } catch {
      // not UTF-8: fall back to CP437 below
    }
  }
  return decodeLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
}

/** Extracts every entry of the zip open as `fd` (`size` bytes) through `writer`; `onProgress` gets compressed bytes passed. */
export async function extractZip(
  fd: number,
  size: number,
  writer: TreeWriter,
  budget: ExtractionBudget,
  strip: number,
  signal: AbortSignal,
  onProgress: (done: number) => void,
): Promise<void> {
  const { zip, reader } = await openZip(fd, size);
  const abort = () => zip.close();
  signal.addEventListener("abort", abort, { once: true });
  try {
    if (zip.entryCount > budget.limits.maxEntries) {
      throw refuseArchive(`it lists ${zip.entryCount} entries, more than ${budget.limits.maxEntries}`, "limit_exceeded");
    }
    // Entries are read and written synchronously (zip-reader.ts): the pacer gives the loop its turns.
    const pacer = new Pacer();
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      await pacer.turn();
      signal.throwIfAborted();
      await extractEntry(zip, reader, entry, writer, budget, strip, signal);
      onProgress(entry.relativeOffsetOfLocalHeader + entry.compressedSize);
    }
  } finally {
    signal.removeEventListener("abort", abort);
    zip.close();
  }
}

async function extractEntry(
  zip: ZipFile,
  reader: WindowedReader,
  entry: Entry,
  writer: TreeWriter,
  budget: ExtractionBudget,
  strip: number,
  signal: AbortSignal,
): Promise<void> {
  const name = decodeName(entry);
  budget.addEntry(name);
  const unixMode = entry.versionMadeBy >> 8 === UNIX_HOST ? entry.externalFileAttributes >>> 16 : 0;
  const type = unixMode & S_IFMT;
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR)
    throw refuseEntry(name, SPECIAL_KIND[type] ?? `file type 0o${type.toString(8)} is not extracted`);
  const isDir =
    type === S_IFDIR || name.endsWith("/") || name.endsWith("\\") || (type === 0 && (entry.externalFileAttributes & DOS_DIRECTORY) !== 0);
  const rel = safeEntryPath(name, strip);
  if (rel === null) return;
  const mtime = entry.getLastModDate();
  if (isDir) {
    await writer.directory(rel, unixMode || undefined, mtime).catch((err: unknown) => {
      throw wrapWriteError(name, err);
    });
    return;
  }
  if (entry.isEncrypted()) throw refuseEntry(name, "it is encrypted");
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    throw refuseEntry(name, `compression method ${entry.compressionMethod} is not supported (only stored and deflate)`);
  if (entry.compressedSize <= SMALL_ENTRY_BYTES && entry.uncompressedSize <= SMALL_ENTRY_BYTES) {
    const content = readSmallEntry(reader, entry, name);
    budget.addBytes(name, content.length);
    try {
      writer.smallFile(rel, content, unixMode || undefined, mtime);
    } catch (err) {
      throw describeEntryError(name, err);
    }
    return;
  }
  const data = await openEntry(zip, entry, name, {});
  // A cancel must stop a long entry mid-way, not after it.
  const stop = () => data.destroy(signal.reason instanceof Error ? signal.reason : new Error("cancelled"));
  signal.addEventListener("abort", stop, { once: true });
  try {
    await writer.file(rel, data as AsyncIterable<Buffer>, unixMode || undefined, mtime, (n) => budget.addBytes(name, n));
  } catch (err) {
    data.destroy();
    throw signal.aborted ? err : describeEntryError(name, err);
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/** The whole content of a small entry, inflated synchronously and checked against its declared size. */
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;

/**
 * The whole content of a small entry, read straight from the file (the local header is checked as
 * yauzl checks it), inflated synchronously and checked against its declared size.
 */
function readSmallEntry(reader: WindowedReader, entry: Entry, name: string): Buffer {
  const header = reader.readRange(entry.relativeOffsetOfLocalHeader, LOCAL_HEADER_BYTES);
  if (header.length < LOCAL_HEADER_BYTES || header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) {
    throw refuseEntry(name, "its local header is missing or damaged");
  }
  const start = entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
  const stored = reader.readRange(start, entry.compressedSize);
  if (stored.length !== entry.compressedSize) throw refuseEntry(name, "its data runs past the end of the archive");
  let data = stored;
  if (entry.isCompressed()) {
    try {
      data = inflateRawSync(stored, { maxOutputLength: entry.uncompressedSize + 1 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
        throw refuseEntry(name, `its headers lie about its size (it inflates past the ${entry.uncompressedSize} bytes declared)`);
      }
      throw refuseEntry(name, `its data is damaged (${(err as Error).message})`);
    }
  }
  if (data.length !== entry.uncompressedSize) {
    throw refuseEntry(name, `its headers lie about its size (${data.length} bytes, ${entry.uncompressedSize} declared)`);
  }
  return data;
}

function describeEntryError(name: string, err: unknown): unknown {
  const message = (err as Error)?.message ?? String(err);
  if (/bytes in the stream|size mismatch/.test(message)) return refuseEntry(name, `its headers lie about its size (${message})`);
  if (err instanceof Error && !(err as NodeJS.ErrnoException).code && err.name === "Error")
    return refuseEntry(name, `its data is damaged (${message})`);
  return wrapWriteError(name, err);
}

function openZip(fd: number, size: number): Promise<{ zip: ZipFile; reader: WindowedReader }> {
  return new Promise((resolve, reject) => {
    const options = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: false };
    const reader = openWindowedReader(fd, size);
    const fromReader = (
      yauzl as unknown as {
        fromRandomAccessReader: (r: unknown, size: number, o: object, cb: (err: Error | null, zip: ZipFile) => void) => void;
      }
    ).fromRandomAccessReader;
    fromReader(reader, size, options, (err, zip) => {
      if (err) {
        reader.close(() => undefined);
        reject(refuseArchive(`the zip is damaged or truncated (${err.message})`));
      } else resolve({ zip, reader });
    });
  });
}

function nextEntry(zip: ZipFile): Promise<Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off("entry", onEntry);
      zip.off("end", onEnd);
      zip.off("error", onError);
    };
    const onEntry = (e: Entry) => {
      cleanup();
      resolve(e);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(refuseArchive(`the zip is damaged (${err.message})`));
    };
    zip.on("entry", onEntry);
    zip.on("end", onEnd);
    zip.on("error", onError);
    zip.readEntry();
  });
}

function openEntry(zip: ZipFile, entry: Entry, name: string, options: { decompress?: boolean }): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, options as never, (err, stream) => {
      if (err) reject(describeEntryError(name, err));
      else resolve(stream);
    });
  });
}

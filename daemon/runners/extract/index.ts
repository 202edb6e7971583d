import { chmod, lstat, mkdir, opendir, rename, stat, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { Transform } from "node:stream";
import { ActionError } from "../../../protocol/errors.js";
import { openRegularFile } from "../../util/regular-file.js";
import type { RunContext } from "../context.js";
import { makeParents } from "../make-parents.js";
import { throttledProgress } from "../progress-throttle.js";
import { requireNameFits, tempSibling } from "../temp-name.js";
import { DEFAULT_LIMITS, ExtractionBudget, type ExtractLimits } from "./budget.js";
import { decompressedTar } from "./decompress.js";
import { refuseArchive } from "./entry-path.js";
import { removeTree } from "./remove-tree.js";
import { detectArchiveFormat, type ArchiveFormat } from "./sniff.js";
import { extractTarStream } from "./tar.js";
import { TreeWriter } from "./tree-writer.js";
import { extractZip } from "./zip.js";

/**
 * Extracts an untrusted archive into a new directory: everything goes into a temporary sibling
 * of `dest`, which is renamed into place only when every entry passed the safety rules; any
 * refusal, failure or cancel removes the temporary directory, so no trace is left.
 */

export { ARCHIVE_FORMATS, type ArchiveFormat } from "./sniff.js";
export { DEFAULT_LIMITS, type ExtractLimits } from "./budget.js";

export interface ExtractOptions {
  /** Absolute path of the archive. */
  archive: string;
  /** Absolute path of the directory to create; it must not exist. */
  dest: string;
  /** Skips sniffing; must agree with the file's magic bytes when those are definite. */
  format?: ArchiveFormat;
  /** Leading path components to drop from every entry (GNU tar's --strip-components). */
  strip?: number;
  /** Create missing parent directories of `dest` first (never `dest` itself). */
  parents?: boolean;
  limits?: Partial<ExtractLimits>;
}

export interface ExtractResult {
  dest: string;
  format: ArchiveFormat;
  entries: number;
  bytes: number;
  /** What the extraction made directly in `dest`, by name (directories end in "/"), at most MAX_TOP_LEVEL. */
  topLevel: string[];
  /** Present when `dest` holds more than MAX_TOP_LEVEL entries (topLevel then names MAX_TOP_LEVEL of them). */
  topLevelTruncated?: true;
}

/** The most top-level entries a result names: enough for a release's folder or a few files, small for a flat tarball. */
export const MAX_TOP_LEVEL = 100;

const READ_CHUNK_BYTES = 256 * 1024;

/** Extracts `opts.archive` into `opts.dest` per the rules above; throws ActionError on any refusal. */
export async function extractArchive(ctx: RunContext, opts: ExtractOptions): Promise<ExtractResult> {
  const strip = opts.strip ?? 0;
  if (!Number.isInteger(strip) || strip < 0)
    throw new ActionError("invalid_request", `strip must be a whole number ≥ 0, got ${strip}`, { path: "/strip" });
  requireNameFits(opts.dest, "/dest");
  if (opts.parents) await makeParents(dirname(opts.dest), "/dest");
  await requireFreshDest(opts.dest);
  // One descriptor, checked to be a regular file before anything reads it: a FIFO or device
  // would otherwise hold a thread-pool thread (or, for the zip reader, the event loop) forever.
  const { handle, stats } = await openRegularFile(opts.archive, "/archive");
  try {
    return await extractOpenArchive(ctx, opts, handle, stats.size, strip);
  } finally {
    await handle.close();
  }
}

async function extractOpenArchive(
  ctx: RunContext,
  opts: ExtractOptions,
  handle: FileHandle,
  archiveSize: number,
  strip: number,
): Promise<ExtractResult> {
  const format = await detectArchiveFormat(handle, opts.archive, opts.format);
  const budget = new ExtractionBudget({ ...DEFAULT_LIMITS, ...opts.limits });
  const progress = throttledProgress(ctx, "extract");
  const temp = tempSibling(opts.dest, "extracting");
  await mkdir(temp, { mode: 0o700 });
  try {
    const writer = new TreeWriter(temp);
    progress.update(0, archiveSize);
    if (format === "zip") {
      await extractZip(handle.fd, archiveSize, writer, budget, strip, ctx.signal, (done) => progress.update(done, archiveSize));
    } else {
      let read = 0;
      const meter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          read += chunk.length;
          progress.update(read, archiveSize);
          done(null, chunk);
        },
      });
      const source = handle.createReadStream({ start: 0, highWaterMark: READ_CHUNK_BYTES, autoClose: false });
      source.on("error", (err) => meter.destroy(err));
      await extractTarStream(decompressedTar(format, source.pipe(meter)), writer, budget, strip, ctx.signal);
    }
    ctx.signal.throwIfAborted();
    await writer.finish();
    const top = await topLevel(temp);
    await chmod(temp, 0o755);
    await requireFreshDest(opts.dest);
    await rename(temp, opts.dest);
    progress.update(archiveSize, archiveSize);
    progress.flush();
    return { dest: opts.dest, format, entries: budget.entries, bytes: budget.bytes, ...top };
  } catch (err) {
    await removeTree(temp);
    if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
    throw explain(err);
  }
}

/**
 * The entries directly in `dir` (the fresh extraction root), read one at a time and at most
 * MAX_TOP_LEVEL + 1 of them, so a flat archive of 100,000 files costs no more than a small one.
 */
async function topLevel(dir: string): Promise<{ topLevel: string[]; topLevelTruncated?: true }> {
  const names: string[] = [];
  const handle = await opendir(dir);
  try {
    for (let entry = await handle.read(); entry !== null; entry = await handle.read()) {
      if (names.length === MAX_TOP_LEVEL) return { topLevel: names.sort(), topLevelTruncated: true };
      names.push(entry.isDirectory() ? `${entry.name}/` : entry.name);
    }
  } finally {
    await handle.close();
  }
  return { topLevel: names.sort() };
}

/** The destination must be new, and its parent must exist. */
async function requireFreshDest(dest: string): Promise<void> {
  if (await lstat(dest).catch(() => undefined)) {
    throw new ActionError("conflict", `${dest} already exists; extract into a new directory`, { path: "/dest" });
  }
  if (!(await stat(dirname(dest)).catch(() => undefined))?.isDirectory()) {
    throw new ActionError("not_found", `directory ${dirname(dest)} does not exist; pass parents: true to create it`, { path: "/dest" });
  }
}

/** Decoder and parser errors mean a damaged archive; disk errors stay what they are. */
function explain(err: unknown): unknown {
  if (err instanceof ActionError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === "ENOSPC" || e?.code === "EDQUOT")
    return new ActionError("limit_exceeded", `the disk is full: ${e.message}`, { cause: err });
  if (e?.code && /^E[A-Z]+$/.test(e.code) && e.syscall)
    return new ActionError("internal", `extraction failed: ${e.message}`, { cause: err });
  // xz-embedded's XZ_MEMLIMIT_ERROR: the archive asks for a dictionary larger than the decoder allows.
  if (/get_next_output failed with error code 4\b/.test(e?.message ?? ""))
    return refuseArchive("its xz dictionary is larger than the decoder allows", "limit_exceeded");
  return refuseArchive(`it is damaged or truncated (${e?.message ?? String(err)})`);
}

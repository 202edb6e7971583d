import { lstat, open, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { ActionError } from "../../protocol/errors.js";
import type { RunContext } from "./context.js";
import { sha256FromSumsUrl, urlFileName, type SumsSource } from "./checksum-file.js";
import { chooseDownloadName } from "./download-name.js";
import { headerValue, openFollowingRedirects, parseHttpUrl, logSafeUrl, type OpenedResponse } from "./http-open.js";
import { installDownload, planDestination } from "./download-dest.js";
import { BatchedSink } from "./download-sink.js";
import { sha256Of } from "./hash-thread.js";
import { makeParents } from "./make-parents.js";
import { throttledProgress } from "./progress-throttle.js";
import { requireNameFits, tempSibling } from "./temp-name.js";

/**
 * Streams one URL to disk: into a temporary file beside the destination while SHA-256 is
 * computed, resuming dropped connections with Range requests, and renamed into place only when
 * the body is complete and its hash is the expected one. Any failure or cancel removes the
 * temporary file and leaves an existing destination untouched.
 */

export interface DownloadOptions {
  url: string;
  /** Absolute path of the file to write, or of a directory (existing, or written with a trailing `/`) to put it in. */
  dest: string;
  /** Expected SHA-256, hex. */
  sha256?: string;
  /** Instead of `sha256`: the sums file to take it from, and the entry (default: the URL's file name). */
  sha256sums?: SumsFileRef;
  overwrite?: boolean;
  /** Create the missing directories on the way to the file first (`mkdir -p`). */
  parents?: boolean;
  maxRedirects?: number;
  /** Resume attempts after a dropped connection. */
  maxRetries?: number;
  /** Pause before each resume attempt, times the attempt number. */
  retryDelayMs?: number;
  headers?: Record<string, string>;
  authorization?: { origin: string; value: string };
  dispatcher?: Dispatcher;
}

export interface SumsFileRef {
  url: string;
  name?: string;
  /** How errors name the sums file (default: its URL) and the request field it came from. */
  label?: string;
  field?: string;
  headers?: Record<string, string>;
}

export interface DownloadResult {
  path: string;
  size: number;
  sha256: string;
  /** The URL the body finally came from (after redirects), credentials and query removed. */
  url: string;
  /** The check the hash passed, when there was one: the request's `sha256`, or a sums file's entry. */
  verified?: Verified;
}

/** What a download's SHA-256 was checked against. */
export interface Verified {
  sha256: string;
  /** "sha256" (the request's own field), or the sums file's name ("SHA256SUMS", a release asset's name). */
  against: string;
  /** The sums file's entry that listed the hash. */
  entry?: string;
  /** Where the sums file came from (log-safe). */
  url?: string;
}

/** Downloads `opts.url` per the rules above; throws ActionError on every refusal or failure. */
export async function downloadFile(ctx: RunContext, opts: DownloadOptions): Promise<DownloadResult> {
  const url = parseHttpUrl(opts.url);
  let expected = normalizeSha256(opts.sha256);
  if (!opts.dest.endsWith("/")) requireNameFits(opts.dest, "/dest");
  if (opts.parents) await makeParents(opts.dest.endsWith("/") ? opts.dest : dirname(opts.dest), "/dest");
  const target = await planDestination(opts.dest, opts.overwrite ?? false);
  let source: SumsSource | undefined;
  let check: Omit<Verified, "sha256"> | undefined = expected ? { against: "sha256" } : undefined;
  if (opts.sha256sums) {
    const sums = opts.sha256sums;
    const field = sums.field ?? "/sha256sums/url";
    const sumsUrl = parseHttpUrl(sums.url, field);
    source = { sums: sums.label ?? logSafeUrl(sumsUrl), name: sums.name ?? urlFileName(url) };
    check = { against: sums.label ?? (urlFileName(sumsUrl) || logSafeUrl(sumsUrl)), entry: source.name, url: logSafeUrl(sumsUrl) };
    ctx.progress({ phase: "checksum", message: `${source.sums} (${source.name})` });
    expected = await sha256FromSumsUrl(ctx.signal, sumsUrl, source.name, {
      field,
      label: source.sums,
      headers: sums.headers,
      authorization: opts.authorization,
      dispatcher: opts.dispatcher,
    });
  }
  ctx.progress({ phase: "connect", message: logSafeUrl(url) });
  const res = await openFollowingRedirects(url, {
    signal: ctx.signal,
    headers: opts.headers,
    maxRedirects: opts.maxRedirects,
    authorization: opts.authorization,
    dispatcher: opts.dispatcher,
    lean: true,
  });
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    throw statusError(res);
  }
  let path: string;
  try {
    path = target.file ?? join(target.dir, chooseDownloadName(res.url, headerValue(res.headers, "content-disposition")));
  } catch (err) {
    res.body.destroy();
    throw err;
  }
  if (!target.file && !(opts.overwrite ?? false) && (await exists(path))) {
    res.body.destroy();
    throw new ActionError("conflict", `${path} already exists; pass overwrite: true to replace it`, { path: "/dest" });
  }
  const temp = tempSibling(path, "part");
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, "wx", 0o644);
    const { size, sha256 } = await receiveBody(ctx, handle, res, opts);
    await handle.close();
    handle = undefined;
    if (expected && sha256 !== expected) {
      const from = source ? ` (from ${source.sums}, entry ${JSON.stringify(source.name)})` : "";
      throw new ActionError(
        "invalid_request",
        `SHA-256 mismatch for ${logSafeUrl(res.url)}: expected ${expected}${from}, got ${sha256}; nothing was written`,
        {
          path: source ? "/sha256sums" : "/sha256",
          details: { expected, actual: sha256, ...source },
        },
      );
    }
    await installDownload(temp, path, opts.overwrite ?? false);
    return { path, size, sha256, url: logSafeUrl(res.url), ...(check ? { verified: { sha256, ...check } } : {}) };
  } catch (err) {
    res.body.destroy();
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw ctx.signal.aborted ? (ctx.signal.reason ?? err) : err;
  }
}

/** Reads the body (and resumed bodies after a drop) into `handle`, hashing in order; returns size and hash. */
async function receiveBody(ctx: RunContext, handle: FileHandle, first: OpenedResponse, opts: DownloadOptions) {
  const progress = throttledProgress(ctx, "download");
  const maxRetries = opts.maxRetries ?? 5;
  const validator = headerValue(first.headers, "etag") ?? headerValue(first.headers, "last-modified");
  // Servers often support Range without saying so; only an explicit "none" rules a resume out.
  const rangesAccepted = headerValue(first.headers, "accept-ranges")?.toLowerCase() !== "none";
  let total = contentLength(first);
  let hash = await sha256Of(handle, total);
  try {
    let written = 0;
    let res = first;
    for (let attempt = 0; ; attempt++) {
      const sink = new BatchedSink(handle, hash, written);
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          await sink.push(chunk);
          progress.update(sink.received, total);
        }
        await sink.drain();
        written = sink.written;
        break;
      } catch (err) {
        await sink.drain().catch(() => undefined);
        written = sink.written;
        if (ctx.signal.aborted || err instanceof ActionError) throw err;
        if (!rangesAccepted || attempt >= maxRetries) {
          throw new ActionError(
            "unavailable",
            `connection to ${logSafeUrl(res.url)} dropped after ${written} bytes${rangesAccepted ? ` and ${attempt} resume attempts` : " and the server does not accept Range requests"}: ${(err as Error).message}`,
            { cause: err },
          );
        }
        ctx.log.warn({ url: logSafeUrl(res.url), written, attempt: attempt + 1 }, "download dropped; resuming with Range");
        await delay((opts.retryDelayMs ?? 250) * (attempt + 1), undefined, { signal: ctx.signal });
        const headers: Record<string, string> = { ...opts.headers, range: `bytes=${written}-` };
        if (validator) headers["if-range"] = validator;
        res = await openFollowingRedirects(res.url, {
          signal: ctx.signal,
          headers,
          maxRedirects: opts.maxRedirects,
          authorization: opts.authorization,
          dispatcher: opts.dispatcher,
          lean: true,
        });
        if (res.statusCode === 206 && rangeStart(res) === written) {
          total = rangeTotal(res) ?? total;
        } else if (res.statusCode === 200) {
          // The resource changed (If-Range failed) or the server ignored Range: start over.
          await handle.truncate(0);
          hash.drop();
          total = contentLength(res);
          hash = await sha256Of(handle, total);
          written = 0;
        } else {
          await res.body.dump().catch(() => undefined);
          throw statusError(res);
        }
      }
    }
    if (total !== null && written !== total) {
      throw new ActionError("unavailable", `${logSafeUrl(res.url)} ended after ${written} of ${total} bytes`);
    }
    progress.update(written, total);
    progress.flush();
    return { size: written, sha256: await hash.digest() };
  } finally {
    hash.drop(); // a no-op after the digest
  }
}

function normalizeSha256(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const hex = value
    .trim()
    .toLowerCase()
    .replace(/^sha256:/, "");
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new ActionError("invalid_request", `sha256 must be 64 hex digits, got ${JSON.stringify(value)}`, { path: "/sha256" });
  return hex;
}

function statusError(res: OpenedResponse): ActionError {
  const code = res.statusCode === 404 || res.statusCode === 410 ? "not_found" : "unavailable";
  return new ActionError(code, `${logSafeUrl(res.url)} answered HTTP ${res.statusCode}`, {
    path: "/url",
    details: { status: res.statusCode },
  });
}

function contentLength(res: OpenedResponse): number | null {
  const v = headerValue(res.headers, "content-length");
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
}

function rangeStart(res: OpenedResponse): number | null {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(headerValue(res.headers, "content-range") ?? "");
  return m ? Number(m[1]) : null;
}

function rangeTotal(res: OpenedResponse): number | null {
  const m = /^bytes \d+-\d+\/(\d+)$/.exec(headerValue(res.headers, "content-range") ?? "");
  return m ? Number(m[1]) : null;
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}

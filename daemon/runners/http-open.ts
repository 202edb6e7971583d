import type { Dispatcher } from "undici";
import { ActionError } from "../../protocol/errors.js";
import { leanGet, leanRequestable } from "./http-lean.js";

/**
 * Opens an HTTP(S) GET and follows redirects by hand, so that every hop is checked (scheme,
 * loop, count) and credentials never travel to another origin.
 */

export const DEFAULT_MAX_REDIRECTS = 10;
/** How much of a body undici buffers ahead of the reader (its default, 64 KiB, stalls the socket while the disk is busy). */
const BODY_BUFFER_BYTES = 4 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface OpenOptions {
  signal: AbortSignal;
  headers?: Record<string, string>;
  maxRedirects?: number;
  /** Sent only while the request stays on `credentialOrigin` (e.g. a GitHub token). */
  authorization?: { origin: string; value: string };
  dispatcher?: Dispatcher;
  /** JSON Pointer of the request field the URL came from, for error messages. */
  fieldPath?: string;
  /**
   * Read a plain-http body through http-lean.ts (large reads, no stream per chunk): for download
   * bodies. A response it does not read (no Content-Length, or Transfer-Encoding) is asked for
   * again through undici.
   */
  lean?: boolean;
}

/** A response body: undici's, or http-lean.ts's. */
export interface ResponseBody extends AsyncIterable<Buffer> {
  dump(): Promise<void>;
  destroy(): void;
  on(event: "error", listener: (err: Error) => void): unknown;
}

export interface OpenedResponse {
  url: URL;
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: ResponseBody;
}

/** Parses a user-supplied URL, refusing anything but http and https. */
export function parseHttpUrl(raw: string, fieldPath = "/url"): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ActionError("invalid_request", `not a valid URL: ${JSON.stringify(raw)}; give an absolute http:// or https:// URL`, {
      path: fieldPath,
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ActionError("invalid_request", `URL scheme ${url.protocol} is not supported; only http and https URLs can be downloaded`, {
      path: fieldPath,
    });
  }
  return url;
}

/** A URL fit for messages and logs: user:password@ removed, query kept out (it may carry signed tokens). */
export function logSafeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** First value of a response header. */
export function headerValue(headers: OpenedResponse["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** GETs `start`, following at most `maxRedirects` redirects; the returned body is unread. */
export async function openFollowingRedirects(start: URL, opts: OpenOptions): Promise<OpenedResponse> {
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const chain: URL[] = [];
  let url = start;
  for (;;) {
    chain.push(url);
    const headers: Record<string, string> = { "user-agent": "hotline", ...opts.headers };
    if (opts.authorization && url.origin === opts.authorization.origin) headers.authorization = opts.authorization.value;
    const unreachable = (err: unknown): never => {
      if (opts.signal.aborted) throw err;
      throw new ActionError("unavailable", `could not reach ${logSafeUrl(url)}: ${(err as Error).message}`, {
        path: opts.fieldPath,
        cause: err,
      });
    };
    const lean =
      opts.lean && !opts.dispatcher && leanRequestable(url, headers)
        ? await leanGet(url, headers, opts.signal).catch(unreachable)
        : undefined;
    // undici is loaded on first use: it adds ~20 MB to a daemon that may never download, and every
    // megabyte the daemon holds makes each process spawn (fork) slower.
    const res =
      lean ??
      (await (
        await import("./undici-request.js")
      )
        .request(url, {
          method: "GET",
          headers,
          signal: opts.signal,
          dispatcher: opts.dispatcher,
          highWaterMark: BODY_BUFFER_BYTES,
        })
        .catch(unreachable));
    const location = headerValue(res.headers, "location");
    if (!REDIRECT_STATUSES.has(res.statusCode) || !location) {
      // Destroying an unread body (a refusal after the headers) makes undici emit an abort error;
      // readers see errors through their own iterator, so this listener only keeps that one quiet.
      res.body.on("error", () => undefined);
      return { url, statusCode: res.statusCode, headers: res.headers, body: res.body };
    }
    await res.body.dump().catch(() => undefined);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new ActionError("unavailable", `${logSafeUrl(url)} redirected to an invalid location ${JSON.stringify(location)}`, {
        path: opts.fieldPath,
      });
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") {
      throw new ActionError(
        "invalid_request",
        `${logSafeUrl(url)} redirected to a ${next.protocol} URL; only http and https are followed`,
        { path: opts.fieldPath },
      );
    }
    const describe = () => [...chain, next].map(logSafeUrl).join(" -> ");
    if (chain.some((seen) => seen.href === next.href)) {
      throw new ActionError("unavailable", `redirect loop: ${describe()}`, { path: opts.fieldPath, details: { redirects: chain.length } });
    }
    if (chain.length > maxRedirects) {
      throw new ActionError("unavailable", `more than ${maxRedirects} redirects: ${describe()}`, {
        path: opts.fieldPath,
        details: { redirects: chain.length },
      });
    }
    url = next;
  }
}

import type { Dispatcher } from "undici";
import { ActionError } from "../../protocol/errors.js";
import { logSafeUrl, openFollowingRedirects } from "./http-open.js";

/**
 * The expected SHA-256 of a download taken from a sums file (`SHA256SUMS`, `checksums.txt`,
 * `tool.tar.gz.sha256`) fetched before the download itself, so a missing entry fails in seconds
 * instead of after the big body.
 */

/** Sums files are small; anything bigger is not one. */
const MAX_SUMS_BYTES = 1024 * 1024;
const FIELD = "/sha256sums";

/** Where the hash came from: named in the mismatch error. */
export interface SumsSource {
  /** The sums file's URL (log-safe) or release asset name. */
  sums: string;
  /** The entry looked up in it. */
  name: string;
}

/** Fetches the sums file at `url` (bounded) and returns the hash listed for `name`. */
export async function sha256FromSumsUrl(
  signal: AbortSignal,
  url: URL,
  name: string,
  opts: {
    field: string;
    /** How messages name the sums file (an asset name), default its URL. */
    label?: string;
    headers?: Record<string, string>;
    authorization?: { origin: string; value: string };
    dispatcher?: Dispatcher;
  },
): Promise<string> {
  const { field, label, ...open } = opts;
  const res = await openFollowingRedirects(url, { signal, ...open, fieldPath: field });
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    const code = res.statusCode === 404 || res.statusCode === 410 ? "not_found" : "unavailable";
    throw new ActionError(code, `the sums file ${label ?? logSafeUrl(res.url)} answered HTTP ${res.statusCode}`, {
      path: field,
      details: { status: res.statusCode },
    });
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > MAX_SUMS_BYTES) {
      res.body.destroy();
      throw new ActionError("limit_exceeded", `the sums file ${label ?? logSafeUrl(res.url)} is larger than ${MAX_SUMS_BYTES} bytes`, {
        path: field,
      });
    }
    chunks.push(chunk);
  }
  return findSha256(Buffer.concat(chunks).toString("utf8"), name, label ?? logSafeUrl(res.url));
}

/**
 * The hash for `name` in a sums file: GNU lines (`HEX  name`, `HEX *name`), BSD lines
 * (`SHA256 (name) = HEX`), or a file holding one bare hash. A `./` or directory prefix on an
 * entry is ignored when exactly one entry has that file name.
 */
export function findSha256(text: string, name: string, sums: string): string {
  const entries: { name: string; hex: string }[] = [];
  const bare: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const gnu = /^([0-9a-fA-F]{64})(?:\s+\*?(.+))?$/.exec(line);
    const bsd = /^SHA256\s*\((.+)\)\s*=\s*([0-9a-fA-F]{64})$/.exec(line);
    if (gnu && gnu[2] === undefined) bare.push(gnu[1]!.toLowerCase());
    else if (gnu) entries.push({ name: gnu[2]!, hex: gnu[1]!.toLowerCase() });
    else if (bsd) entries.push({ name: bsd[1]!, hex: bsd[2]!.toLowerCase() });
  }
  if (entries.length === 0 && bare.length === 1) return bare[0]!;
  const exact = entries.filter((e) => e.name === name || e.name === `./${name}`);
  const byBase = exact.length > 0 ? exact : entries.filter((e) => e.name.split("/").at(-1) === name);
  const hashes = [...new Set(byBase.map((e) => e.hex))];
  if (hashes.length === 1) return hashes[0]!;
  const listed = entries.map((e) => e.name);
  const problem = hashes.length === 0 ? "has no entry for" : `has ${byBase.length} different entries for`;
  throw new ActionError(
    "invalid_request",
    `the sums file ${sums} ${problem} ${JSON.stringify(name)}; name the entry with sha256sums.name (entries: ${listed.slice(0, 20).join(", ") || "(none)"}${listed.length > 20 ? ", …" : ""})`,
    { path: `${FIELD}/name`, details: { sums, name, entries: listed.slice(0, 100) } },
  );
}

/** The file name a URL's last path segment gives (decoded), the default entry to look up. */
export function urlFileName(url: URL): string {
  const last = url.pathname.split("/").at(-1) ?? "";
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

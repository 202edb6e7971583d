/**
 * Chooses the local file name for a download whose `dest` is a directory: the server's
 * Content-Disposition name when present, else the last segment of the final URL — always reduced
 * to one harmless path component, because both come from the remote side.
 */

const FALLBACK_NAME = "download";
const MAX_NAME_BYTES = 255;

/** Reduces an untrusted name to a single safe file name (no separators, no `..`, no control characters). */
export function sanitizeFileName(raw: string): string {
  const lastSegment = raw.split(/[\\/]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  let name = lastSegment.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (name === "" || name === "." || name === "..") return FALLBACK_NAME;
  while (Buffer.byteLength(name) > MAX_NAME_BYTES) name = name.slice(0, -1);
  return name;
}

/** Extracts the file name from a Content-Disposition header (RFC 6266: `filename*` wins over `filename`). */
export function nameFromContentDisposition(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[2]!.trim());
    } catch {
      // fall through to the plain parameter
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted) return quoted[1]!.replace(/\\(.)/g, "$1");
  const bare = /filename\s*=\s*([^;\s]+)/i.exec(header);
  return bare?.[1];
}

/** Last non-empty path segment of a URL, percent-decoded when that is valid. */
export function nameFromUrl(url: URL): string | undefined {
  const segment = url.pathname.split("/").filter(Boolean).pop();
  if (!segment) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The sanitized name to store a response under. */
export function chooseDownloadName(finalUrl: URL, contentDisposition: string | undefined): string {
  return sanitizeFileName(nameFromContentDisposition(contentDisposition) ?? nameFromUrl(finalUrl) ?? FALLBACK_NAME);
}

import { ActionError } from "../../protocol/errors.js";

/**
 * Chooses the local file name for a download whose `dest` is a directory: the server's
 * Content-Disposition name when present, else the last segment of the final URL — always reduced
 * to one harmless path component, because both come from the remote side. A name that is still
 * risky (a dotfile such as `.bashrc`, a leading `-`, a trailing `~`) is refused rather than
 * changed: the caller names the file itself when it really wants one.
 */

const FALLBACK_NAME = "download";
const MAX_NAME_BYTES = 255;

/** Reduces an untrusted name to a single safe file name (no separators, no `..`, no control characters). */
export function sanitizeFileName(raw: string): string {
  const lastSegment = raw.split(/[\\/]/).pop() ?? "";
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

/** Why a remote-chosen name is not used as is, or undefined when it is safe. */
function riskOf(name: string): string | undefined {
  if (name.startsWith(".")) return "it is a hidden file (dotfiles such as .bashrc configure programs)";
  if (name.startsWith("-")) return "it starts with '-' and would read as an option";
  if (name.endsWith("~")) return "it ends with '~' like an editor backup";
  return undefined;
}

/** The sanitized name to store a response under; invalid_request when the server's name is unsafe. */
export function chooseDownloadName(finalUrl: URL, contentDisposition: string | undefined): string {
  const fromHeader = nameFromContentDisposition(contentDisposition);
  const name = sanitizeFileName(fromHeader ?? nameFromUrl(finalUrl) ?? FALLBACK_NAME);
  const risk = riskOf(name);
  if (risk) {
    const source = fromHeader !== undefined ? "the server's Content-Disposition header" : "the last segment of the final URL";
    throw new ActionError(
      "invalid_request",
      `${source} names the file ${JSON.stringify(name)}, which is not used for a download into a directory because ${risk}; give the file name yourself in dest (a path that does not end in /)`,
      {
        path: "/dest",
        details: { name },
      },
    );
  }
  return name;
}

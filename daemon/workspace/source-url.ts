import path from "node:path";
import { ActionError } from "../../protocol/errors.js";

/**
 * Checks where a repository is cloned from before the address reaches git's argv and the clone's
 * config. Credentials never travel in a URL (they would land in argv, in `.git/config` and in
 * `repos.list`): private repositories authenticate through the filesystem — a git credential
 * helper, `~/.git-credentials`, or an ssh key/agent.
 */

const MAX_URL_LENGTH = 2048;
const CONTROL = /[\x00-\x1f\x7f]/;
/** `[user@]host:path` — git's scp-like ssh form. */
const SCP_LIKE = /^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+:(?!\/\/)[^:]/;

/** Returns the URL unchanged when it is an allowed remote address, else throws invalid_request at /url. */
export function checkCloneUrl(url: string): string {
  const refuse = (why: string) => {
    throw new ActionError("invalid_request", `url is refused: ${why}`, { path: "/url" });
  };
  if (url.length === 0 || url.length > MAX_URL_LENGTH) refuse(`it must be 1-${MAX_URL_LENGTH} characters`);
  if (CONTROL.test(url) || url.startsWith("-")) refuse("it contains control characters or starts with '-'");
  if (url.includes("::")) refuse("transport helpers ('ext::', 'fd::' …) are not allowed; use https://, ssh://, git:// or file://");
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (SCP_LIKE.test(url)) return url;
    refuse("use https://, ssh://, git://, file:// or the scp-like form git@host:owner/repo.git (for a local directory pass path instead)");
  }
  if (!["https", "http", "ssh", "git", "file"].includes(scheme!)) refuse(`scheme ${scheme}:// is not allowed; use https, ssh, git or file`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse("it is not a valid URL");
  }
  if (parsed.password !== "" || ((scheme === "https" || scheme === "http") && parsed.username !== "")) {
    refuse(
      "credentials must not be part of the URL (they would be stored in argv and .git/config); configure a git credential helper or ~/.git-credentials, or use an ssh key",
    );
  }
  return url;
}

/** Returns an absolute local path to clone from, else throws invalid_request at /path. */
export function checkClonePath(p: string): string {
  if (!path.isAbsolute(p) || CONTROL.test(p) || p.length > 4096) {
    throw new ActionError(
      "invalid_request",
      `path ${JSON.stringify(p.slice(0, 100))} must be an absolute path to a git repository on this machine`,
      { path: "/path" },
    );
  }
  return path.resolve(p);
}

/** The URL with credentials masked, for display (repos.list) of clones whose origin was set elsewhere. */
export function maskUrlCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "" || (/^https?:$/.test(u.protocol) && u.username !== "")) {
      u.username = "***";
      u.password = "";
      return u.toString();
    }
  } catch {
    /* scp-like or not a URL: nothing to mask */
  }
  return url;
}

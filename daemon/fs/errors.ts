import { ActionError } from "../../protocol/errors.js";
import { outOfDescriptors } from "../util/descriptors.js";

/**
 * Turns a Node filesystem error into the ActionError an agent can act on, naming the path and
 * the way out; anything unexpected stays `internal` with the system's message.
 */
export function fsError(err: unknown, path: string, field = "/path"): ActionError {
  if (err instanceof ActionError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  const message = (err as Error).message;
  switch (code) {
    case "ENOENT":
      return new ActionError("not_found", `${path} does not exist (or a directory on its way does not)`, { path: field });
    case "ENOTDIR":
      return new ActionError("not_found", `a component of ${path} is not a directory`, { path: field });
    case "EEXIST":
      return new ActionError("conflict", `${path} already exists`, { path: field });
    case "ENOTEMPTY":
      return new ActionError("conflict", `${path} is a directory that is not empty`, { path: field });
    case "EISDIR":
      return new ActionError("invalid_request", `${path} is a directory`, { path: field });
    case "EACCES":
    case "EPERM":
      return new ActionError("invalid_request", `permission denied on ${path} (the daemon runs as its own user)`, { path: field });
    case "EROFS":
      return new ActionError("invalid_request", `${path} is on a read-only filesystem`, { path: field });
    case "ELOOP":
      return new ActionError("invalid_request", `${path} has too many levels of symbolic links`, { path: field });
    case "EXDEV":
      return new ActionError(
        "invalid_request",
        `${path}: source and destination are on different filesystems; copy with files.read/files.write or shell instead`,
        { path: field },
      );
    case "ENOSPC":
    case "EDQUOT":
      return new ActionError("limit_exceeded", `no space left on the filesystem of ${path}`, { path: field });
    case "EMFILE":
    case "ENFILE":
      return outOfDescriptors(err, path);
    case "ENAMETOOLONG":
      return new ActionError("invalid_request", `a name in ${path} is too long`, { path: field });
    default:
      return new ActionError("internal", `${path}: ${message}`, { path: field });
  }
}

/** Whether `err` is "no such file" (an absent path is an answer, not a failure, in several places). */
export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

import { readFileSync } from "node:fs";
import { ActionError } from "../../protocol/errors.js";

/** Whether `err` says the process (EMFILE) or the system (ENFILE) has no file descriptor left. */
export function isOutOfDescriptors(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "EMFILE" || code === "ENFILE";
}

/**
 * Out of file descriptors is a passing condition of the daemon, not a bug in the request: the
 * caller may retry once other work has closed some (`unavailable`, never `internal`).
 */
export function outOfDescriptors(err: unknown, what?: string): ActionError {
  const code = (err as NodeJS.ErrnoException).code;
  const whose = code === "ENFILE" ? "the system has" : "the daemon has";
  return new ActionError(
    "unavailable",
    `${what ? `${what}: ` : ""}${whose} no file descriptor left (${code}); retry in a moment, or end jobs, watches or connections that hold files`,
    { cause: err },
  );
}

/**
 * The daemon's soft limit of open files (RLIMIT_NOFILE), or undefined where /proc does not say.
 * Node raises the soft limit to the hard one at start-up (src/node.cc, PlatformInit), so this is the
 * hard limit the daemon was started under; nothing more can be had without privilege.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === "unlimited" ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

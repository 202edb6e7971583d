import { readFileSync } from "node:fs";
import { join } from "node:path";
import { hotlineDirectories, type DirectoryOptions } from "./directories.js";
import { HotlineError } from "./errors.js";

/** What a client needs to open a connection. */
export interface Endpoint {
  url: string;
  token: string;
  /** The daemon.json it came from, when it was discovered (named in connection errors). */
  daemonFile?: string;
}

/** Reads a token file; a missing or empty one is `unauthorized`, naming the file. */
export function readTokenFile(path: string): string {
  let token: string;
  try {
    token = readFileSync(path, "utf8").trim();
  } catch (err) {
    throw new HotlineError("unauthorized", `cannot read the token file ${path}: ${(err as Error).message}`, { cause: err });
  }
  if (!token) throw new HotlineError("unauthorized", `the token file ${path} is empty`);
  return token;
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Finds the local daemon as the CLI does: the URL from <state>/daemon.json, the token from
 * <config>/token. A daemon.json whose pid is gone (a crashed or killed daemon leaves it behind)
 * is `unavailable` naming the file, instead of a bare ECONNREFUSED later.
 */
export function discoverDaemon(options: DirectoryOptions = {}): Endpoint {
  const { stateDir, configDir } = hotlineDirectories(options);
  const daemonFile = join(stateDir, "daemon.json");
  let text: string;
  try {
    text = readFileSync(daemonFile, "utf8");
  } catch {
    throw new HotlineError("unavailable", `no running daemon found (${daemonFile} is missing); start one with: hotline daemon`, {
      details: { daemonFile },
    });
  }
  let record: { url?: unknown; pid?: unknown };
  try {
    record = JSON.parse(text) as { url?: unknown; pid?: unknown };
  } catch (err) {
    throw new HotlineError(
      "unavailable",
      `${daemonFile} is not valid JSON (${(err as Error).message}); restart the daemon: hotline daemon`,
      { details: { daemonFile } },
    );
  }
  if (typeof record.url !== "string")
    throw new HotlineError("unavailable", `${daemonFile} has no url; restart the daemon: hotline daemon`, { details: { daemonFile } });
  if (typeof record.pid === "number" && !processExists(record.pid)) {
    throw new HotlineError(
      "unavailable",
      `stale ${daemonFile}: the daemon that wrote it (pid ${record.pid}) is gone; start one with: hotline daemon`,
      {
        details: { daemonFile, pid: record.pid, url: record.url },
      },
    );
  }
  return { url: record.url, token: readTokenFile(join(configDir, "token")), daemonFile };
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HotlineClient } from "./client.js";
import { NoDaemon } from "./exit-codes.js";

/** Where the CLI will look for a daemon, and what it knows about the one daemon.json names. */
export interface DaemonTarget {
  url: string;
  token: string;
  /** The pid daemon.json recorded, when the URL came from it. */
  pid?: number;
}

interface Where {
  stateDir: string;
  configDir: string;
  /** --url: a daemon that daemon.json does not name. */
  url?: string;
  /** --token-file: its token. */
  tokenFile?: string;
}

/** The URL from --url or <state>/daemon.json, the token from --token-file or <config>/token. */
export function findDaemon(where: Where): DaemonTarget {
  let url = where.url;
  let pid: number | undefined;
  if (url !== undefined) {
    if (!/^wss?:\/\//.test(url)) throw new Error(`--url ${url}: expected the daemon's ws:// URL (a repository's clone URL goes to repos add --origin)`);
  } else {
    const file = join(where.stateDir, "daemon.json");
    try {
      const recorded = JSON.parse(readFileSync(file, "utf8")) as { url: string; pid?: number };
      url = recorded.url;
      pid = recorded.pid;
    } catch {
      throw new NoDaemon(`no running daemon found (${file} is missing); start one with: hotline daemon — or name one with --url ws://HOST:PORT --token-file FILE`);
    }
  }
  const tokenFile = where.tokenFile ?? join(where.configDir, "token");
  let token: string;
  try {
    token = readFileSync(tokenFile, "utf8").trim();
  } catch (err) {
    throw new Error(`cannot read the token ${tokenFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the daemon writes it on its first start, or pass --token-file FILE`);
  }
  return { url, token, ...(pid !== undefined ? { pid } : {}) };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Connects, turning "connection refused" into a sentence that says which daemon was expected. */
export async function connectTo(target: DaemonTarget): Promise<HotlineClient> {
  try {
    return await HotlineClient.connect(target.url, target.token);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ECONNREFUSED" && code !== "ECONNRESET" && code !== "EHOSTUNREACH") throw err;
    const why =
      target.pid === undefined
        ? "nothing listens there"
        : isRunning(target.pid)
          ? `daemon.json is from pid ${target.pid}, which is running but not listening there`
          : `daemon.json is from pid ${target.pid}, which is not running; start a daemon with: hotline daemon`;
    throw new NoDaemon(`no daemon at ${target.url} (${why})`);
  }
}

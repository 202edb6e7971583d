import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";

/** The exit code of a daemon refused because another one holds the state directory. */
export const ALREADY_RUNNING_EXIT_CODE = 3;

/** What the holder tells a second daemon that asks. */
export interface LockHolder {
  pid: number;
  url: string | null;
}

export type LockResult = { ok: true; lock: InstanceLock } | { ok: false; holder: LockHolder | undefined };

const ASK_TIMEOUT_MS = 2000;

/**
 * The single-instance lock of a state directory: a Linux abstract-namespace unix socket named by
 * the SHA-256 of the directory's real path. Binding is atomic, fails with EADDRINUSE while another
 * process holds the name, and the kernel frees the name the moment the holder dies (even by
 * SIGKILL), so no stale lock file is ever left to clean up. The holder answers each connection
 * with one JSON line `{pid, url}`, so the refused daemon can say who is running.
 */
export class InstanceLock {
  private url: string | null = null;

  private constructor(private readonly server: Server) {
    server.on("connection", (socket) => {
      socket.on("error", () => socket.destroy());
      socket.end(`${JSON.stringify({ pid: process.pid, url: this.url } satisfies LockHolder)}\n`);
    });
    // The lock must never keep the process alive on its own.
    server.unref();
  }

  /** The socket name of a state directory (which must exist, so its real path is known). */
  static nameFor(stateDir: string): string {
    return `\0hotline-${createHash("sha256").update(realpathSync(stateDir)).digest("hex")}`;
  }

  /** Takes the lock, or reports who holds it. */
  static acquire(stateDir: string): Promise<LockResult> {
    const name = InstanceLock.nameFor(stateDir);
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once("error", (err: NodeJS.ErrnoException) => {
        if (err.code !== "EADDRINUSE") return reject(err);
        void askHolder(name).then((holder) => resolve({ ok: false, holder }));
      });
      server.listen({ path: name }, () => resolve({ ok: true, lock: new InstanceLock(server) }));
    });
  }

  /** Publishes the daemon's URL to later askers once it listens. */
  setUrl(url: string): void {
    this.url = url;
  }

  release(): void {
    this.server.close();
  }
}

/** Reads the holder's one-line answer; undefined when it does not answer in time. */
function askHolder(name: string): Promise<LockHolder | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const socket = createConnection({ path: name });
    const finish = (holder: LockHolder | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(holder);
    };
    const timer = setTimeout(() => finish(undefined), ASK_TIMEOUT_MS);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > 4096) finish(undefined); // not our holder's answer
    });
    socket.on("end", () => {
      try {
        finish(JSON.parse(text) as LockHolder);
      } catch {
        finish(undefined);
      }
    });
    socket.on("error", () => finish(undefined));
  });
}

/** The message a refused daemon prints. */
export function alreadyRunningMessage(holder: LockHolder | undefined, stateDir: string): string {
  if (!holder) return `hotline is already running (state directory ${stateDir} is locked by another daemon)`;
  return `hotline is already running (pid ${holder.pid}, ${holder.url ?? "still starting"}; state directory ${stateDir})`;
}

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll } from "vitest";
import type WebSocket from "ws";
import { Connection } from "../../client/connection.js";
import { HotlineError } from "../../client/errors.js";
import { type StallRecord, watchedDaemons } from "./stalls.js";

const ROOT = new URL("../../", import.meta.url).pathname;
export const DAEMON_MAIN = join(ROOT, "dist/daemon/main.js");
export const CLI_MAIN = join(ROOT, "dist/cli/main.js");
/** The node flags every launcher gives the daemon (package.json start, the CLI's shebang, image/install.sh). */
export { DAEMON_NODE_FLAGS } from "../../daemon/node-flags.js";
import { DAEMON_NODE_FLAGS } from "../../daemon/node-flags.js";

export interface DaemonDirs {
  root: string;
  state: string;
  config: string;
  cache: string;
  home: string;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Reuse the directories of an earlier daemon (restart tests). */
  dirs?: DaemonDirs;
  /** A command that execs the daemon, e.g. `["prlimit", "--nofile=256:256", "--"]` (same pid). */
  launcher?: string[];
}

/** A real daemon process on 127.0.0.1:<free port> with its own state, config and cache directories. */
export class TestDaemon {
  url = "";
  token = "";
  readonly logLines: string[] = [];
  /** The watchdog's stall records this daemon logged, in order. */
  readonly stalls: StallRecord[] = [];
  /** Set by a test that stalls the daemon on purpose: its stalls fail nothing. */
  stallsExpected = false;
  private exited: Promise<number | null>;

  private constructor(
    readonly proc: ChildProcess,
    readonly dirs: DaemonDirs,
  ) {
    this.exited = new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
  }

  /** The environment a CLI run needs to find this daemon. */
  get cliEnv(): Record<string, string> {
    return { ...process.env, HOTLINE_STATE_DIR: this.dirs.state, HOTLINE_CONFIG_DIR: this.dirs.config, HOME: this.dirs.home } as Record<
      string,
      string
    >;
  }

  static async start(options: StartOptions = {}): Promise<TestDaemon> {
    const dirs = options.dirs ?? newDirs();
    const [command, ...prefix] = [...(options.launcher ?? []), process.execPath];
    const proc = spawn(
      command!,
      [...prefix, ...DAEMON_NODE_FLAGS, DAEMON_MAIN, "--port", "0", "--ssh-port", "0", ...(options.args ?? [])],
      {
        env: { ...daemonEnv(dirs), ...options.env },
        stdio: ["ignore", "inherit", "pipe"],
      },
    );
    const daemon = new TestDaemon(proc, dirs);
    watchedDaemons.push(daemon);
    const lines = createInterface({ input: proc.stderr! });
    const listening = new Promise<string>((resolve, reject) => {
      lines.on("line", (line) => {
        daemon.logLines.push(line);
        try {
          const record = JSON.parse(line) as { msg?: string; url?: string };
          if (record.msg === "listening" && record.url) resolve(record.url);
          if (record.msg === "event loop stalled") daemon.stalls.push(record as unknown as StallRecord);
        } catch {
          // not JSON: kept in logLines for the failure message
        }
      });
      proc.once("exit", (code) => reject(new Error(`daemon exited (${code}) before listening:\n${daemon.logLines.join("\n")}`)));
    });
    daemon.url = await listening;
    // A daemon told of a token file elsewhere (--token-file) may start before it exists: no token then.
    const tokenFile = options.env?.HOTLINE_TOKEN_FILE ?? join(dirs.config, "token");
    daemon.token = existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : "";
    return daemon;
  }

  async client(headers: Record<string, string> = {}, token = this.token): Promise<TestClient> {
    return TestClient.connect(this.url, token, headers);
  }

  /** Graceful stop (SIGTERM); resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill("SIGTERM");
    return this.exited;
  }

  /** A crash: SIGKILL, no clean-up. */
  async kill(): Promise<void> {
    this.proc.kill("SIGKILL");
    await this.exited;
  }

  /** Removes the directories (call after stop). */
  cleanup(): void {
    rmSync(this.dirs.root, { recursive: true, force: true });
  }
}

/** The environment that points a daemon at a test's directories. */
export function daemonEnv(dirs: DaemonDirs): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    HOME: dirs.home,
    HOTLINE_STATE_DIR: dirs.state,
    HOTLINE_CONFIG_DIR: dirs.config,
    HOTLINE_CACHE_DIR: dirs.cache,
    HOTLINE_SYSTEM_CONFIG_DIR: join(dirs.root, "etc"),
    HOTLINE_WORKSPACE_ROOT: join(dirs.root, "workspace"),
  };
}

export function newDirs(): DaemonDirs {
  const root = mkdtempSync(join(tmpdir(), "hotline-test-"));
  return { root, state: join(root, "state"), config: join(root, "config"), cache: join(root, "cache"), home: root };
}

export type Frame = Record<string, any>;

/**
 * A client that keeps a transcript, so a failed wait shows what did arrive. Built on the client
 * library's Connection (hotline/client): its request/reply correlation and frame parsing; the
 * transcript holds every frame as sent (binary output frames as their header plus `bytes`).
 */
export class TestClient {
  readonly frames: Frame[] = [];
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];

  private constructor(readonly connection: Connection) {
    connection.onFrame((frame) => {
      this.frames.push(frame);
      for (const w of [...this.waiters]) {
        if (w.match(frame)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    });
  }

  /** Rejects a refused upgrade with `status` and `body` (the daemon's JSON error) for the auth tests. */
  static async connect(url: string, token: string | undefined, headers: Record<string, string> = {}): Promise<TestClient> {
    try {
      return new TestClient(await Connection.open({ url, token }, headers));
    } catch (err) {
      const details = err instanceof HotlineError ? err.details : undefined;
      if (typeof details?.httpStatus !== "number") throw err;
      throw Object.assign(new Error(`HTTP ${details.httpStatus}`, { cause: err }), {
        status: details.httpStatus,
        body: String(details.body),
      });
    }
  }

  /** The raw WebSocket (terminate, pause its socket). */
  get ws(): WebSocket {
    return this.connection.socket as WebSocket;
  }

  /** Sends a raw frame (text) without waiting. */
  sendRaw(text: string | Buffer): void {
    this.ws.send(text);
  }

  /** Sends an action and resolves with the whole reply frame ({id, ok, result|error}). */
  async call(action: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<Frame> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${timeoutMs} ms waiting for the reply to ${action}; last frames:\n${this.transcript()}`)),
        timeoutMs,
      );
    });
    try {
      return (await Promise.race([this.connection.exchange(action, params), timeout])).frame;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Like call, but expects ok:true and returns the result. */
  async ok(action: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<Frame> {
    const reply = await this.call(action, params, timeoutMs);
    if (!reply.ok) throw new Error(`${action} failed: ${JSON.stringify(reply.error)}`);
    return reply.result as Frame;
  }

  /** Resolves with the first frame (already received or future) that matches; fails with the transcript. */
  waitFor(match: (f: Frame) => boolean, timeoutMs = 30_000, what = "frame"): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last frames:\n${this.transcript()}`));
      }, timeoutMs);
      const done = (f: Frame): void => {
        clearTimeout(timer);
        resolve(f);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  /** Waits for job.exit of a followed job. */
  waitForExit(job: string, timeoutMs = 30_000): Promise<Frame> {
    return this.waitFor((f) => f.event === "job.exit" && f.job === job, timeoutMs, `job.exit of ${job}`);
  }

  /** Concatenated bytes of the job.output events received for a job. */
  outputOf(job: string, stream?: string): Buffer {
    return Buffer.concat(
      this.frames
        .filter((f) => f.event === "job.output" && f.job === job && (stream === undefined || f.stream === stream))
        .map((f) => (f.bytes ? (f.bytes as Buffer) : Buffer.from(f.data, f.encoding === "base64" ? "base64" : "utf8"))),
    );
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  private transcript(): string {
    return this.frames
      .slice(-20)
      .map((f) => JSON.stringify(f).slice(0, 300))
      .join("\n");
  }
}

/** One daemon and one client for a describe block, started before its tests and stopped after. */
export function useDaemon(options: StartOptions = {}): { readonly daemon: TestDaemon; readonly client: TestClient } {
  const ctx = {} as { daemon: TestDaemon; client: TestClient };
  beforeAll(async () => {
    ctx.daemon = await TestDaemon.start(options);
    ctx.client = await ctx.daemon.client();
  });
  afterAll(async () => {
    await ctx.client?.close();
    await ctx.daemon?.stop();
    ctx.daemon?.cleanup();
  });
  return ctx;
}

/** Runs `fn` against a fresh daemon and a client, then always closes, stops and cleans up. */
export async function withDaemon<T>(options: StartOptions, fn: (daemon: TestDaemon, client: TestClient) => Promise<T>): Promise<T> {
  const daemon = await TestDaemon.start(options);
  const client = await daemon.client();
  try {
    return await fn(daemon, client);
  } finally {
    await client.close();
    await daemon.stop();
    daemon.cleanup();
  }
}

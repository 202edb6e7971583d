import type { JobStatus } from "../protocol/common.js";
import type { ActionName, ParamsFor, ResultFor } from "../protocol/index.js";
import { CodeClient } from "./code.js";
import { Connection } from "./connection.js";
import type { DirectoryOptions } from "./directories.js";
import { discoverDaemon, readTokenFile, type Endpoint } from "./discovery.js";
import { HotlineError } from "./errors.js";
import type { FollowStream, ReconnectPolicy } from "./follow.js";
import { IdleConnections } from "./idle-connections.js";
import { Job } from "./job.js";
import { Session } from "./session.js";

/**
 * Where the daemon is. Nothing (or only directories): the local daemon, found like the CLI finds
 * it. `url` with `token` or `tokenFile`: any daemon.
 */
export interface ConnectOptions extends DirectoryOptions {
  url?: string;
  token?: string;
  tokenFile?: string;
  /** Extra headers of the WebSocket upgrade (e.g. an Origin the daemon allows). */
  headers?: Record<string, string>;
  /** How long opening a connection may take before it fails with `unavailable` (default 10 s). */
  connectTimeoutMs?: number;
  /** Open no connection in connect(): the first request or follow opens it (and reports a missing daemon). */
  lazy?: boolean;
  /** How a follow reconnects after a dropped socket (default 5 attempts, back-off from 100 ms). */
  reconnect?: Partial<ReconnectPolicy>;
}

/** The params argument may be left out when the action has no required field. */
export type ParamsArg<N extends ActionName> = {} extends ParamsFor<N> ? [params?: ParamsFor<N>] : [params: ParamsFor<N>];

/** What `shell` resolves with: the job handle and status, and the inline output when `wait` saw the job end. */
export interface ShellResult {
  job: Job;
  status: JobStatus;
  /** The output (all streams interleaved); when long, its head and tail with `omittedBytes` left out between. */
  output?: Buffer;
  omittedBytes?: number;
}

function endpointResolver(options: ConnectOptions): () => Endpoint {
  if (options.url === undefined) {
    if (options.token !== undefined || options.tokenFile !== undefined)
      throw new HotlineError("invalid_request", "token and tokenFile need a url; without url the local daemon's token is used");
    return () => discoverDaemon(options);
  }
  const url = options.url;
  if (options.token !== undefined) {
    const token = options.token;
    return () => ({ url, token });
  }
  if (options.tokenFile === undefined) throw new HotlineError("invalid_request", `connecting to ${url} needs a token or a tokenFile`);
  const tokenFile = options.tokenFile;
  return () => ({ url, token: readTokenFile(tokenFile) });
}

/**
 * A client of one daemon. Requests share one connection, reopened on the next request after it
 * drops (a request in flight when it dropped rejects with `unavailable`: it may or may not have
 * run, so retry only with an idempotency `key`). Each follow has a connection of its own; one
 * that ended with job.exit is kept open for the next follow (at most 2 idle), and an idle
 * connection never keeps the process alive (see IdleConnections).
 */
export class HotlineClient {
  readonly reconnect: ReconnectPolicy;
  /** Stateful Python and JavaScript contexts: `client.code.run("x = 1")` (see CodeClient). */
  readonly code: CodeClient = new CodeClient(this);
  private main: Promise<Connection> | undefined;
  /** The main connection once open: a request on it needs no await before sending (round trips are benchmarked). */
  private mainOpen: Connection | undefined;
  private readonly connections = new Set<Connection>();
  private readonly follows = new Set<FollowStream>();
  private readonly idle = new IdleConnections();
  /** Connections still opening: close() waits for them, so none is left behind. */
  private readonly opening = new Set<Promise<unknown>>();
  private closed = false;

  private constructor(
    private readonly resolveEndpoint: () => Endpoint,
    private readonly options: ConnectOptions,
  ) {
    this.reconnect = { attempts: options.reconnect?.attempts ?? 5, delayMs: options.reconnect?.delayMs ?? 100 };
  }

  /** Connects (the first connection is opened here, so a wrong URL or token fails now — unless `lazy`). */
  static async connect(options: ConnectOptions = {}): Promise<HotlineClient> {
    const client = new HotlineClient(endpointResolver(options), options);
    if (!options.lazy) await client.connection();
    return client;
  }

  /** Sends one action: the name, params and result are typed by protocol/. Rejects with HotlineError. */
  async request<N extends ActionName>(action: N, ...[params]: ParamsArg<N>): Promise<ResultFor<N>> {
    const open = this.mainOpen;
    const connection = open && !open.closed ? open : await this.connection();
    return (await connection.request(action, params ?? {})) as ResultFor<N>;
  }

  /** Runs a command (the `shell` action); with `wait`, the output comes back inline when the job ended in time. */
  async shell(command: ParamsFor<"shell">["command"], options: Omit<ParamsFor<"shell">, "command"> = {}): Promise<ShellResult> {
    const { job, output } = await this.request("shell", { ...options, command });
    const result: ShellResult = { job: this.job(job.id), status: job };
    if (output) {
      result.output = Buffer.from(output.data, output.encoding === "base64" ? "base64" : "utf8");
      result.omittedBytes = output.omittedBytes;
    }
    return result;
  }

  /**
   * The sandbox over time (state.metrics): CPU, memory, disks, processes, connections and jobs,
   * one sample every `intervalMs`, oldest first. Pass the last sample's `at` as `sinceMs` to get
   * only newer ones; a job's own CPU and memory are its status's `usage`.
   */
  metrics(options: ParamsFor<"state.metrics"> = {}): Promise<ResultFor<"state.metrics">> {
    return this.request("state.metrics", options);
  }

  /**
   * A shell session: opens one (session.open: `cwd`, `env`, `inputWaitMs`, `idleTimeoutMs`, or
   * `resume` a lost one), or with `id` attaches to an existing one (session.status).
   */
  async session(options: ParamsFor<"session.open"> & { id?: string } = {}): Promise<Session> {
    const { id, ...open } = options;
    if (id !== undefined) return new Session(this, id, (await this.request("session.status", { session: id })).session);
    const { session } = await this.request("session.open", open);
    return new Session(this, session.id, session);
  }

  /** A handle on an existing job (no request is sent). */
  job(id: string): Job {
    return new Job(this, id);
  }

  /** Closes every connection (idle ones too) and stops every follow; resolves once no socket or timer is left. */
  async close(): Promise<void> {
    this.closed = true;
    const follows = [...this.follows].map((f) => f.stop());
    const main = this.main?.catch(() => undefined);
    this.main = undefined;
    this.mainOpen = undefined;
    await Promise.all([...follows, main, ...this.opening, this.idle.close()]);
    await Promise.all([...this.connections].map((c) => c.close()));
  }

  /**
   * A connection of its own (used by follows), closed with the client: an idle one a finished
   * follow left open when there is one, else a new one.
   */
  async openConnection(): Promise<Connection> {
    if (this.closed) throw new HotlineError("unavailable", "the client is closed");
    const idle = this.idle.take();
    if (idle) return idle;
    const opening = Connection.open(this.resolveEndpoint(), this.options.headers, this.options.connectTimeoutMs).then((connection) => {
      this.connections.add(connection);
      connection.onClose(() => this.connections.delete(connection));
      return connection;
    });
    const settled = opening.catch(() => undefined);
    this.opening.add(settled);
    const connection = await opening.finally(() => this.opening.delete(settled));
    if (this.closed) {
      await connection.close();
      throw new HotlineError("unavailable", "the client is closed");
    }
    return connection;
  }

  /**
   * @internal A follow that ended with job.exit hands its connection back, its listeners removed:
   * the daemon's follower is gone, so the next follow may use it.
   */
  releaseConnection(connection: Connection): void {
    if (this.closed) void connection.close();
    else this.idle.keep(connection);
  }

  /** @internal Follows register so close() can stop them. */
  track(follow: FollowStream): () => void {
    this.follows.add(follow);
    return () => this.follows.delete(follow);
  }

  private async connection(): Promise<Connection> {
    const current = this.main;
    if (current) {
      const connection = await current.catch(() => undefined);
      if (connection && !connection.closed) return connection;
      // Dropped, or its open failed: the next request opens a new one (the daemon may be back).
      if (this.main === current) this.main = undefined;
    }
    this.main ??= this.openConnection().then((connection) => (this.mainOpen = connection));
    return this.main;
  }
}

/** Connects to a daemon: the local one by default, or `{url, token}` / `{url, tokenFile}`. */
export function connect(options: ConnectOptions = {}): Promise<HotlineClient> {
  return HotlineClient.connect(options);
}

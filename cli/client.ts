import { join } from "node:path";
import { HotlineClient, type ParamsArg } from "../client/client.js";
import type { Connection } from "../client/connection.js";
import { discoverDaemon } from "../client/discovery.js";
import { HotlineError } from "../client/errors.js";
import type { FollowOptions, FollowStream } from "../client/follow.js";
import type { ActionName, ResultFor } from "../protocol/index.js";
import { NoDaemon } from "./exit-codes.js";

/** Where the CLI looks for its daemon: the directories (from its config rules) and --url / --token-file. */
export interface DaemonWhere {
  stateDir: string;
  configDir: string;
  /** --url: a daemon that daemon.json does not name. */
  url?: string;
  /** --token-file: its token (default <config>/token). */
  tokenFile?: string;
}

/**
 * The CLI's way to its daemon, on the hotline/client library. Nothing is opened until the first
 * request or follow, so verbs that need no daemon (`hotline schema`) work without one. A daemon
 * that cannot be reached, or that goes away before it answers, is NoDaemon (exit 69); the
 * daemon's own error replies reject as HotlineError (exit 1).
 */
export class CliClient {
  private client: Promise<HotlineClient> | undefined;
  private connection: Promise<Connection> | undefined;

  constructor(private readonly where: DaemonWhere) {
    if (where.url !== undefined && !/^wss?:\/\//.test(where.url)) {
      throw new Error(`--url ${where.url}: expected the daemon's ws:// URL (a repository's clone URL goes to repos add --origin)`);
    }
  }

  /** Typed by protocol/: the action name, its params and its result. */
  request<N extends ActionName>(action: N, ...params: ParamsArg<N>): Promise<ResultFor<N>>;
  /** Any action and params, the result cast to T: for `hotline send` and params built at run time. */
  request<T = Record<string, unknown>>(action: string, params?: Record<string, unknown>): Promise<T>;
  async request(action: string, params: object = {}): Promise<unknown> {
    const connection = await this.ready();
    try {
      return await connection.request(action, params);
    } catch (err) {
      // The connection closed under the request: the daemon stopped or died (its replies keep it open).
      if (connection.closed && err instanceof HotlineError && err.code === "unavailable") throw new NoDaemon(err.message);
      throw err;
    }
  }

  /** Opens the connection requests use (once); a daemon that is not there is NoDaemon. */
  ready(): Promise<Connection> {
    this.connection ??= (async () => {
      try {
        return await (await this.library()).openConnection();
      } catch (err) {
        throw this.unreachable(err);
      }
    })();
    return this.connection;
  }

  /** The job's events on a connection of their own (binary output frames unless `binary: false`), resuming across dropped sockets. */
  async follow(job: string, options: FollowOptions = {}): Promise<FollowStream> {
    await this.ready();
    return (await this.library()).job(job).follow(options);
  }

  /** Closes every connection and follow. */
  async close(): Promise<void> {
    await this.connection?.catch(() => undefined);
    await (await this.client?.catch(() => undefined))?.close();
  }

  /** The library's client (lazy: it opens nothing itself). --token-file alone takes the URL from daemon.json. */
  private library(): Promise<HotlineClient> {
    this.client ??= (async () => {
      const { stateDir, configDir, url, tokenFile } = this.where;
      if (url !== undefined) return HotlineClient.connect({ url, tokenFile: tokenFile ?? join(configDir, "token"), lazy: true });
      if (tokenFile !== undefined)
        return HotlineClient.connect({ url: discoverDaemon({ stateDir, configDir }).url, tokenFile, lazy: true });
      return HotlineClient.connect({ stateDir, configDir, lazy: true });
    })();
    return this.client;
  }

  /** A failure to reach the daemon, in the CLI's words: NoDaemon (exit 69), or an Error for a bad token (exit 3). */
  private unreachable(err: unknown): Error {
    if (!(err instanceof HotlineError)) return err as Error;
    if (err.code !== "unavailable") return new Error(err.message, { cause: err });
    const { pid, url } = err.details ?? {};
    if (typeof pid === "number" && typeof url === "string") {
      return new NoDaemon(
        `no daemon at ${url} (daemon.json is from pid ${pid}, which is not running; start a daemon with: hotline daemon)`,
      );
    }
    const hint = this.where.url === undefined ? " — or name one with --url ws://HOST:PORT --token-file FILE" : "";
    return new NoDaemon(`${err.message}${hint}`);
  }
}

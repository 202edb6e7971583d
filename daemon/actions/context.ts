import type { Logger } from "pino";
import type { ActionDefinition, ParamsOf, ResultOf, Scope } from "../../protocol/define.js";
import type { stateMetrics } from "../../protocol/actions/state-metrics.js";
import type { Activity } from "../activity.js";
import type { BuildInfo, Guide } from "../build-info.js";
import type { Config } from "../config.js";
import type { View } from "../desktop/coordinates.js";
import type { Desktop } from "../desktop/desktop.js";
import type { EnvironmentResolver } from "../environment/resolver.js";
import type { PrepareFeature } from "../features/prepare.js";
import type { FollowSink } from "../jobs/follow.js";
import type { Follower } from "../jobs/follow.js";
import type { FileSession } from "../fs/session.js";
import type { JobManager } from "../jobs/manager.js";
import type { NixProbe } from "../system.js";
import type { PortTable } from "../preview/ports.js";
import type { PreviewLinks } from "../preview/links.js";
import type { TokenStore } from "../tokens/store.js";
import type { SshAccess } from "../ssh/access.js";
import type { Workspace } from "../workspace/workspace.js";
import type { EventLoopReport } from "../watchdog/loop-watch.js";
import type { SessionTable } from "../sessions/index.js";
import type { CodeContextTable } from "../code/index.js";

/**
 * What the link actions need of the browser pages' links (daemon/web/links.ts's PageLinks, which
 * main.ts hands in): declared here so the actions never import the web room above them.
 */
export interface PageLinkIssuer {
  /** The address clients reach the daemon at, http(s); undefined before it listens. */
  baseUrl(): string | undefined;
  /** Why links cannot be served now, or undefined. */
  unavailable(): string | undefined;
  /** Throws what `issue` would for this asker. */
  checkIssue(scope: Scope, issuer: string): void;
  issue(
    page: "terminal" | "console" | "desktop",
    scope: Scope,
    issuer: string,
    ttlMs: number | undefined,
    fragment?: Record<string, string>,
  ): Promise<{ url: string; expiresAt: string; tokenId: string }>;
}

/** Long-lived parts every handler may use; built once in main.ts. */
export interface Services {
  config: Readonly<Config>;
  jobs: JobManager;
  /** Where a job's prepared environment comes from (prepare's index of workspaces). */
  env: { resolver: EnvironmentResolver };
  baseEnv: Record<string, string>;
  tokens: TokenStore;
  activity: Activity;
  build: BuildInfo;
  guide: Guide;
  startedAt: Date;
  log: Logger;
  /** Issues the browser links of terminal.open and console.open. */
  links: PageLinkIssuer;
  /** What `nix --version` and the flakes check said at start-up. */
  nix: NixProbe;
  /** prepare, cache.* and state.catalog: the preparer and whether Nix can run it. */
  prepare: PrepareFeature;
  /** repos.*, tasks.*, secrets.write: the coding workspace. */
  workspace: Workspace;
  /** The watchdog's measure of the daemon's event loop (state.info). */
  eventLoop: { report(): EventLoopReport };
  /** ssh.open and terminal.open's SSH fields: credentials for the SSH server, or why it is not there. */
  ssh: SshAccess;
  /** ports.list and ports.wait: the sandbox's listening TCP ports. */
  ports: PortTable;
  /** preview.open: links to a port, served by the preview proxy. */
  previews: PreviewLinks;
  /** desktop.*, browser.open: the X display, its input, Chromium and the relays. */
  desktop: Desktop;
  /** state.metrics: the sandbox's samples (daemon/metrics, which main.ts hands in). */
  metrics: { reply(sinceMs?: number, limit?: number): ResultOf<typeof stateMetrics> };
  /** session.*: the shell sessions (daemon/sessions). */
  sessions: SessionTable;
  /** code.*: the code contexts (daemon/code). */
  code: CodeContextTable;
}

/** The per-connection state a handler can touch. */
export interface ConnectionState {
  id: string;
  scope: Scope;
  /** The id of the token this connection authenticated with (what it issues names it as issuer). */
  tokenId: string;
  sink: FollowSink;
  followers: Map<string, Follower>;
  /** Chunked uploads and watches of the file actions, made on first use; closed with the connection. */
  files?: FileSession;
  /** This connection's jobs.watch subscription, stopped when the connection closes. */
  watch?: { close(): void };
  /** The space of this connection's last screenshot: desktop.act's coordinates are in it. */
  desktopView?: View;
}

export interface ActionContext {
  services: Services;
  connection: ConnectionState;
  log: Logger;
  /** Runs `fn` once the reply has been sent (so events a handler starts never precede its reply). */
  afterReply(fn: () => void): void;
}

export type Handler<D extends ActionDefinition> = (params: ParamsOf<D>, ctx: ActionContext) => Promise<ResultOf<D>>;

/** Pairs a definition with its handler so the registry can check they match. */
export interface ActionEntry<D extends ActionDefinition = ActionDefinition> {
  definition: D;
  handler: Handler<D>;
}

export function entry<D extends ActionDefinition>(definition: D, handler: Handler<D>): ActionEntry {
  return { definition, handler } as unknown as ActionEntry;
}

import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ACTIONS } from "../protocol/index.js";
import { HANDLERS } from "./actions/index.js";
import type { Services } from "./actions/context.js";
import { Activity } from "./activity.js";
import { loadBuildInfo, loadGuide } from "./build-info.js";
import type { Config } from "./config.js";
import { Dispatcher } from "./dispatch/dispatcher.js";
import { loadRequestValidators } from "./dispatch/validators.js";
import { baseJobEnvironment } from "./environment/job-env.js";
import { withNixpkgsRegistry } from "./nix/registry.js";
import { JobManager } from "./jobs/manager.js";
import { createLogger } from "./logger.js";
import type { LockResult } from "./server/instance-lock.js";
import { HotlineServer } from "./server/server.js";
import type { NixProbe } from "./system.js";
import { oomKillBaseline } from "./process/index.js";
import { missingNodeFlags } from "./node-flags.js";
import { createPrepare } from "./features/prepare.js";
import { createWorkspace } from "./features/workspace.js";
import { TokenStore } from "./tokens/store.js";
import { writeFileAtomicSync } from "./util/atomic-write.js";
import { mcpRoute } from "./mcp-route.js";
import { PageAccess } from "./server/page-access.js";
import { PageAssets } from "./web/assets.js";
import { PageLinks } from "./web/links.js";
import { pageRoute } from "./web/routes.js";
import { LoopWatch } from "./watchdog/loop-watch.js";
import { trackRoute } from "./watchdog/work.js";
import { startProcessJob } from "./actions/process-job.js";
import { SshAccess } from "./ssh/access.js";
import { startSsh } from "./ssh/start.js";
import { createPreview } from "./preview/index.js";
import { Desktop } from "./desktop/desktop.js";
import { CdpRelay } from "./desktop/cdp-relay.js";
import { VncRelay, vncAddress } from "./desktop/vnc-relay.js";
import { vncRoute } from "./web/vnc-route.js";
import { Health, readinessChecks } from "./server/health.js";
import { TokenFileWatch } from "./tokens/file-watch.js";
import { countCalls, createMetrics } from "./metrics/index.js";
import { metricsRoute } from "./metrics-route.js";
import { SessionTable } from "./sessions/index.js";
import { CodeContextTable } from "./code/index.js";

/** Shutdown ends within this, whatever a job, a client or the log does; past it the daemon exits 1. */
const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * The last resort: an exception no callback caught (a socket, timer or stream callback) is logged
 * and the daemon keeps serving everyone else, since the one operation it came from is the only
 * thing lost. Every known path is caught where it can fail cleanly; this is for the unknown ones.
 */
function keepServingOnUncaughtErrors(log: ReturnType<typeof createLogger>): void {
  process.on("uncaughtException", (err, origin) => log.error({ err, origin }, "uncaught exception; the daemon keeps serving"));
  process.on("unhandledRejection", (reason) => log.error({ err: reason }, "unhandled rejection; the daemon keeps serving"));
}

/** What the daemon starts from (entry.ts): the config, the state directory's lock, and the Nix probe already under way. */
export interface Launch {
  config: Readonly<Config>;
  locked: Extract<LockResult, { ok: true }>;
  /** Started before this module loads, so its two `nix` runs overlap the loading. */
  nix: Promise<NixProbe>;
}

/**
 * Start-up order: (entry.ts: config → state dir → instance lock → Nix probe started) → logger →
 * tokens → jobs (restore) → services → server → daemon.json.
 */
export async function startDaemon(launch: Launch): Promise<void> {
  const { config, locked } = launch;
  const lock = locked.lock;
  mkdirSync(config.cacheDir, { recursive: true, mode: 0o700 });
  const log = createLogger(config.logLevel);
  keepServingOnUncaughtErrors(log);
  if (locked.squatted)
    log.warn(
      { stateDir: config.stateDir },
      "the instance lock's socket name was held by a process that could not prove it is this state directory's daemon (another user?); the lock moved to a new name",
    );
  const missingFlags = missingNodeFlags();
  if (missingFlags.length)
    log.info(
      { missing: missingFlags },
      "node was started without the daemon's launcher flags: every job start costs more (README: Memory and process start)",
    );
  const tokens = new TokenStore(config.configDir, undefined, undefined, config.tokenFile);
  // A token file rewritten (a Secret updated) takes effect without a restart.
  const tokenWatch = new TokenFileWatch(tokens, log);
  tokenWatch.start();
  const activity = new Activity();
  const jobs = new JobManager({
    dir: join(config.stateDir, "jobs"),
    outputCapBytes: config.outputCapBytes,
    outputBudgetBytes: config.outputBudgetBytes,
    retainJobs: config.retainJobs,
    log,
  });
  jobs.restore();
  oomKillBaseline(); // the OOM-kill count the first jobs compare against (daemon/process/oom.ts)
  jobs.on("activity", () => activity.touch());
  const build = loadBuildInfo();
  const pageAssets = new PageAssets();
  const links = new PageLinks(tokens, config.publicUrl, pageAssets);
  const pages = new PageAccess(config.allowedHosts, config.publicUrl, config.host);
  const nix = await launch.nix;
  const loopWatch = new LoopWatch(log);
  const prepare = createPrepare({ config, build, log, probe: nix });
  const baseEnv = (await prepare.registry.refresh())
    ? withNixpkgsRegistry(baseJobEnvironment(), prepare.registry.file)
    : baseJobEnvironment();
  const preview = createPreview({
    previewUrl: config.previewUrl,
    ownHosts: [...config.allowedHosts, ...(config.publicUrl ? [new URL(config.publicUrl).hostname] : [])],
    tokens,
    log,
  });
  const vnc = new VncRelay(vncAddress(config.vnc, config.display), tokens, log);
  // Jobs' CPU and memory, the sandbox's samples and /metrics (daemon/metrics); sampling starts once the daemon listens.
  const metrics = createMetrics({
    enabled: config.metrics === "on",
    intervalMs: config.metricsIntervalMs,
    stateDir: config.stateDir,
    jobs,
    tokens,
    eventLoop: loopWatch,
    version: build.version,
    ports: () => ({ api: url ? Number(new URL(url).port) : 0, ssh: services.ssh.status().port ?? 0 }),
    log,
  });
  countCalls(preview.proxy, "handle", () => metrics.counters.previewRequests++);
  const services: Services = {
    config,
    jobs,
    env: { resolver: prepare.preparer.environments },
    baseEnv,
    tokens,
    activity,
    build,
    guide: loadGuide(build),
    startedAt: new Date(),
    log,
    nix,
    prepare,
    workspace: createWorkspace(config),
    links,
    eventLoop: loopWatch,
    ssh: new SshAccess(tokens, config.publicSsh),
    ports: preview.ports,
    previews: preview.links,
    desktop: new Desktop(config.display, vnc),
    metrics,
    sessions: new SessionTable({ jobs, resolver: prepare.preparer.environments, baseEnv, log }),
    code: new CodeContextTable({ jobs, resolver: prepare.preparer.environments, baseEnv, log }),
  };
  services.sessions.restore(); // sessions an earlier daemon left open are lost now
  services.code.restore(); // so are its code contexts: runs naming them, and a new default, are told
  const cdp = new CdpRelay(tokens, services.desktop.browser, config.allowedOrigins, log);
  const dispatcher = new Dispatcher(
    ACTIONS,
    Object.values(HANDLERS),
    services,
    await loadRequestValidators(ACTIONS),
    metrics.counters.request,
  );
  let url = "";
  const health = new Health(
    readinessChecks({ stateDir: config.stateDir, tokens, ssh: config.ssh === "on" ? services.ssh : undefined, display: config.display }),
    log,
  );
  const mcp = mcpRoute({ tokens, allowedOrigins: config.allowedOrigins, maxBodyBytes: config.maxPayloadBytes, url: () => url });
  const server = new HotlineServer({
    host: config.host,
    port: config.port,
    maxPayloadBytes: config.maxPayloadBytes,
    heartbeatMs: config.heartbeatMs,
    maxConnections: config.maxConnections,
    allowedOrigins: config.allowedOrigins,
    tokens,
    dispatcher,
    log,
    pages,
    httpRoutes: [
      mcp,
      pageRoute(pages, tokens, pageAssets),
      cdp.httpRoute,
      metricsRoute({ tokens, allowedOrigins: config.allowedOrigins, exposition: metrics.exposition }),
      ...health.routes(),
    ].map(trackRoute),
    hostRoutes: preview.proxy,
    upgradeRoutes: [cdp.upgradeRoute, vncRoute(vnc, tokens, pages)],
  });
  url = await server.listen();
  links.listening(url);
  preview.listening(url);
  const sshServer = await startSsh({
    config,
    tokens,
    log,
    baseEnv: services.baseEnv,
    resolver: services.env.resolver,
    access: services.ssh,
    // An interactive SSH shell is a terminal job like terminal.open's: listed, its output kept.
    startTerminalJob: async (req) => {
      const { job } = await startProcessJob(
        { kind: "terminal", title: req.title, argv: req.argv, params: { ssh: req.title }, cwd: req.cwd, env: req.env, pty: req },
        { services },
      );
      return jobs.get(job.id);
    },
  });
  lock.setUrl(url);
  metrics.start();
  const daemonFile = join(config.stateDir, "daemon.json");
  writeFileAtomicSync(
    daemonFile,
    `${JSON.stringify({ pid: process.pid, url, version: build.version, startedAt: services.startedAt.toISOString() })}\n`,
  );
  log.info({ url, version: build.version, commit: build.commit, stateDir: config.stateDir, nix, ssh: services.ssh.status() }, "listening");
  loopWatch.start();

  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ why }, "shutting down");
    setTimeout(() => {
      log.error({ deadlineMs: SHUTDOWN_DEADLINE_MS }, "shutdown deadline passed; exiting now");
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    // Each step on its own: one that fails must not keep the next (jobs, daemon.json) from running.
    tokenWatch.close();
    for (const [what, step] of [
      ["mcp", () => mcp.close()],
      ["preview", async () => preview.proxy.close()],
      ["server", () => server.close()],
      ["ssh", async () => sshServer?.close()],
      [
        "relays",
        async () => {
          cdp.close();
          vnc.close();
        },
      ],
      ["jobs", () => jobs.shutdown()],
      ["sessions", () => services.sessions.shutdown()],
      ["code", () => services.code.shutdown()],
      ["tokens", () => tokens.flush()],
      ["desktop", () => services.desktop.close()],
    ] as const) {
      await step().catch((err: unknown) => log.error({ err, step: what }, "shutdown step failed"));
    }
    rmSync(daemonFile, { force: true });
    log.info("stopped");
    // The sink answers at once when stderr is gone; the exit hook writes the rest with bounded retries.
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    lock.release();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  if (config.idleExitMinutes > 0) {
    const idleMs = config.idleExitMinutes * 60_000;
    const timer = setInterval(
      () => {
        if (jobs.active === 0 && activity.idleMs >= idleMs) void stop(`idle for ${config.idleExitMinutes} minutes`);
      },
      Math.min(10_000, idleMs / 4),
    );
    timer.unref();
  }
}

import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ACTIONS } from "../protocol/index.js";
import { HANDLERS } from "./actions/index.js";
import type { Services } from "./actions/context.js";
import { Activity } from "./activity.js";
import { loadBuildInfo, loadGuide } from "./build-info.js";
import { loadConfig, SETTINGS } from "./config.js";
import { Dispatcher } from "./dispatch/dispatcher.js";
import { baseJobEnvironment } from "./environment/job-env.js";
import { withNixpkgsRegistry } from "./nix/registry.js";
import { JobManager } from "./jobs/manager.js";
import { createLogger } from "./logger.js";
import { InstanceLock, ALREADY_RUNNING_EXIT_CODE, alreadyRunningMessage } from "./server/instance-lock.js";
import { HotlineServer } from "./server/server.js";
import { probeNix } from "./system.js";
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
import { SessionTable } from "./sessions/index.js";
import { CodeContextTable } from "./code/index.js";

/** Parses daemon flags (`--port 0`, `--allow-origin X` …) from the SETTINGS table. */
export function parseDaemonFlags(argv: string[]): Record<string, string | string[] | undefined> {
  const options: Record<string, { type: "string"; multiple?: boolean }> = {};
  for (const s of SETTINGS) options[s.flag] = s.kind === "list" ? { type: "string", multiple: true } : { type: "string" };
  return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values as Record<string, string | string[] | undefined>;
}

/** A second daemon on a state directory another one holds: refused before it touches anything. */
export class AlreadyRunningError extends Error {
  readonly exitCode = ALREADY_RUNNING_EXIT_CODE;
}

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

/** Start-up order: config → dirs → instance lock → logger → tokens → jobs (restore) → services → server → daemon.json. */
export async function runDaemon(argv: string[]): Promise<void> {
  const config = loadConfig(parseDaemonFlags(argv));
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  // Nothing else is touched (no token, no crash recovery, no daemon.json) until the lock is ours.
  const locked = await InstanceLock.acquire(config.stateDir);
  if (!locked.ok) throw new AlreadyRunningError(alreadyRunningMessage(locked.holder, config.stateDir));
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
  const tokens = new TokenStore(config.configDir);
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
  const nix = await probeNix();
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
    sessions: new SessionTable({ jobs, resolver: prepare.preparer.environments, baseEnv, log }),
    code: new CodeContextTable({ jobs, resolver: prepare.preparer.environments, baseEnv, log }),
  };
  services.sessions.restore(); // sessions an earlier daemon left open are lost now
  services.code.restore(); // so are its code contexts: runs naming them, and a new default, are told
  const cdp = new CdpRelay(tokens, services.desktop.browser, config.allowedOrigins, log);
  const dispatcher = new Dispatcher(ACTIONS, Object.values(HANDLERS), services);
  let url = "";
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
    httpRoutes: [mcp, pageRoute(pages, tokens, pageAssets), cdp.httpRoute].map(trackRoute),
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (args[0] === "daemon") args.shift();
  runDaemon(args).catch((err: unknown) => {
    if (err instanceof AlreadyRunningError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`hotline: ${(err as Error).message}\n`);
    process.exit(1);
  });
}

import { userInfo } from "node:os";
import { ACTIONS, PROTOCOL_VERSION } from "../../protocol/index.js";
import { stateInfo } from "../../protocol/actions/state-info.js";
import { join } from "node:path";
import type { Config } from "../config.js";
import { EnvironmentCache } from "../nix/cache.js";
import { nixSystem } from "../system.js";
import { WorkspaceLayout } from "../workspace/layout.js";
import { entry } from "./context.js";

/** What never changes while the daemon runs, computed once. */
const fixed = {
  name: "hotline" as const,
  protocolVersion: PROTOCOL_VERSION,
  node: process.version,
  system: nixSystem(),
  user: userInfo().username,
  pid: process.pid,
  actions: ACTIONS.map((a) => ({ name: a.name, scope: a.scope, summary: a.summary })),
};

/** Every directory a client may need, from the modules that own them (so the answer cannot drift). */
function directories(config: Readonly<Config>, system: string) {
  const layout = new WorkspaceLayout(config.workspaceRoot);
  return {
    state: config.stateDir,
    config: config.configDir,
    cache: config.cacheDir,
    systemConfig: config.systemConfigDir,
    workspaceRoot: layout.root,
    repos: layout.reposDir,
    tasks: layout.tasksDir,
    jobs: join(config.stateDir, "jobs"), // as daemon/main.ts gives the JobManager
    environments: new EnvironmentCache(config.cacheDir).entryDir(system, ""), // the parent of every <cacheKey>
    snapshots: join(config.stateDir, "snapshots"), // as daemon/workspace/archive.ts writes them
    bundles: join(config.stateDir, "bundles"),
  };
}

/** The config is frozen: its directories are worked out once, not on every state.info. */
const directoriesOf = new WeakMap<Readonly<Config>, ReturnType<typeof directories>>();
function directoriesOnce(config: Readonly<Config>): ReturnType<typeof directories> {
  let known = directoriesOf.get(config);
  if (!known) directoriesOf.set(config, (known = directories(config, fixed.system)));
  return known;
}

export default entry(stateInfo, async (_params, { services, connection }) => {
  return {
    ...fixed,
    version: services.build.version,
    commit: services.build.commit,
    startedAt: services.startedAt.toISOString(),
    uptimeMs: Date.now() - services.startedAt.getTime(),
    directories: directoriesOnce(services.config),
    jobs: services.jobs.counts(),
    output: { budgetBytes: services.jobs.outputBudgetBytes, usedBytes: services.jobs.outputBytesUsed() },
    lastActivity: services.activity.lastActivity.toISOString(),
    idleMs: services.activity.idleMs,
    nix: services.nix,
    eventLoop: services.eventLoop.report(),
    ssh: services.ssh.status(),
    desktop: await services.desktop.info(),
    scope: connection.scope,
  };
});

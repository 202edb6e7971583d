import { userInfo } from "node:os";
import { ACTIONS, PROTOCOL_VERSION } from "../../protocol/index.js";
import { stateInfo } from "../../protocol/actions/state-info.js";
import { nixSystem, type NixProbe } from "../system.js";
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

export default entry(stateInfo, async (_params, { services, connection }) => {
  const nix = (services.extensions.get("nix.probe") as NixProbe | undefined) ?? { available: false, reason: "not probed yet" };
  return {
    ...fixed,
    version: services.build.version,
    commit: services.build.commit,
    startedAt: services.startedAt.toISOString(),
    uptimeMs: Date.now() - services.startedAt.getTime(),
    directories: { state: services.config.stateDir, config: services.config.configDir, cache: services.config.cacheDir },
    jobs: services.jobs.counts(),
    output: { budgetBytes: services.jobs.outputBudgetBytes, usedBytes: services.jobs.outputBytesUsed() },
    lastActivity: services.activity.lastActivity.toISOString(),
    idleMs: services.activity.idleMs,
    nix,
    scope: connection.scope,
  };
});

import { isDaemonVariable } from "../config.js";
import { isLauncherVariable, launchedByPackageManager, withoutLauncherPath } from "./launcher-env.js";
import type { WorkspaceEnvironment } from "./resolver.js";

/**
 * The daemon's own environment with everything of the daemon's removed — its `HOTLINE_*` settings,
 * and what a package manager that launched it added (see launcher-env.ts); computed once.
 */
export function baseJobEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const launched = launchedByPackageManager(env);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isDaemonVariable(name)) continue;
    if (launched && isLauncherVariable(name)) continue;
    out[name] = launched && name === "PATH" ? withoutLauncherPath(value) : value;
  }
  return out;
}

function joinPathList(fragments: string[], existing: string | undefined): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const part of [...fragments, ...(existing ? existing.split(":") : [])]) {
    if (part === "" || seen.has(part)) continue;
    seen.add(part);
    parts.push(part);
  }
  return parts.join(":");
}

/**
 * A job's environment: the daemon's (minus its own variables), then the workspace's prepared
 * environment, then the job's own `env`, which wins outright: a variable the job sets is used
 * exactly as given, so the workspace's path lists are prepended only to the ones it leaves alone.
 */
export function composeJobEnvironment(
  base: Record<string, string>,
  workspace: WorkspaceEnvironment | null,
  own: Record<string, string> | undefined,
): Record<string, string> {
  if (!workspace && !own) return base; // spawn only reads it
  const env: Record<string, string> = { ...base, ...(workspace?.set ?? {}), ...(own ?? {}) };
  for (const [name, fragments] of Object.entries(workspace?.prepend ?? {})) {
    if (own?.[name] === undefined) env[name] = joinPathList(fragments, env[name]);
  }
  return env;
}

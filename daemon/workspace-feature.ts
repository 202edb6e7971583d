import type { Services } from "./actions/context.js";
import { Workspace } from "./workspace/workspace.js";

const KEY = "workspace";

/** Start-up of the coding workspace: one Workspace over config.workspaceRoot, artifacts under the state dir. */
export function installWorkspace(services: Services): void {
  services.extensions.set(KEY, new Workspace({ root: services.config.workspaceRoot, stateDir: services.config.stateDir }));
}

/** The coding workspace as installed at start-up. */
export function workspaceOf(services: Services): Workspace {
  const ws = services.extensions.get(KEY) as Workspace | undefined;
  if (!ws) throw new Error("the workspace feature was not installed (installWorkspace)");
  return ws;
}

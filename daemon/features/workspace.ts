import type { Config } from "../config.js";
import { Workspace } from "../workspace/workspace.js";

/** The coding workspace: one Workspace over config.workspaceRoot, its artifacts under the state dir. */
export function createWorkspace(config: Readonly<Config>): Workspace {
  return new Workspace({ root: config.workspaceRoot, stateDir: config.stateDir });
}

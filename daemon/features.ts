import type { Services } from "./actions/context.js";
import { installWorkspace } from "./workspace-feature.js";
import { installPrepare } from "./prepare-feature.js";

/**
 * Feature modules (prepare, files, workspace) that need start-up work — restoring an index,
 * installing the environment resolver, registering catalog providers — hook in here.
 */
export async function installFeatures(services: Services): Promise<void> {
  installPrepare(services);
  installWorkspace(services);
}

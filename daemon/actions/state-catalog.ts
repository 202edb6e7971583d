import { stateCatalog } from "../../protocol/actions/state-catalog.js";
import type { ResultOf } from "../../protocol/define.js";
import { nixSystem } from "../system.js";
import { entry, type Services } from "./context.js";

type Catalog = ResultOf<typeof stateCatalog>;

/** prepare registers a richer catalog under this extension key; until then the configured pin is reported. */
export const CATALOG_EXTENSION = "catalog";

function parsePin(ref: string): Catalog["nixpkgs"] {
  const m = /^github:([^/]+)\/([^/]+)\/([0-9a-f]{40})$/.exec(ref);
  return m ? { url: ref, rev: m[3]! } : { url: ref };
}

export default entry(stateCatalog, async (_params, { services }) => {
  const provider = services.extensions.get(CATALOG_EXTENSION) as ((s: Services) => Promise<Catalog>) | undefined;
  if (provider) return provider(services);
  return { system: nixSystem(), nixpkgs: parsePin(services.config.nixpkgs), inputs: [{ name: "nixpkgs", url: services.config.nixpkgs }], workspaces: [] };
});

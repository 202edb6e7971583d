import { cachePrune } from "../../protocol/actions/cache-prune.js";
import { ActionError } from "../../protocol/errors.js";
import { pruneCache } from "../nix/cache-admin.js";
import { entry } from "./context.js";

export default entry(cachePrune, async (params, { services }) => {
  const { preparer } = services.prepare;
  // A running prepare may be about to adopt an entry no workspace points at yet.
  if (preparer.anyBusy()) throw new ActionError("conflict", "a prepare is running; prune once it has finished (jobs.list shows it)");
  return pruneCache(preparer.cache, preparer.environments.list(), params);
});

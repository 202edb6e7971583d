import { cacheList } from "../../protocol/actions/cache-list.js";
import { listCache } from "../nix/cache-admin.js";
import { entry } from "./context.js";

export default entry(cacheList, async (_params, { services }) => {
  const { preparer } = services.prepare;
  return { entries: await listCache(preparer.cache, preparer.environments.list(), preparer.settings.nixEnv) };
});

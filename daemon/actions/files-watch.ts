import { filesWatch } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { policyFor, resolveFollow } from "../fs/policy.js";
import { sessionOf } from "../fs/session.js";
import { MAX_WATCHES_PER_CONNECTION, Watch } from "../fs/watch.js";
import { entry } from "./context.js";

// Events go only to the connection that asked, and stop with it.
export default entry(filesWatch, async (params, { services, connection }) => {
  const policy = await policyFor(services.config);
  const real = await resolveFollow(policy, params.path);
  const session = sessionOf(connection);
  if (session.watches.size >= MAX_WATCHES_PER_CONNECTION) {
    throw new ActionError("limit_exceeded", `at most ${MAX_WATCHES_PER_CONNECTION} watches per connection; files.unwatch one first`);
  }
  const watch = await Watch.start(policy, real, params.recursive === true, connection.sink);
  session.adopt("watches", watch, MAX_WATCHES_PER_CONNECTION, (w) => w.close());
  return { watch: watch.id, path: real };
});

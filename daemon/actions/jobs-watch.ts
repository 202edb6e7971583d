import { jobsWatch } from "../../protocol/actions/jobs-watch.js";
import { ActionError } from "../../protocol/errors.js";
import { JobWatcher } from "../jobs/watch.js";
import { entry } from "./context.js";

const DEFAULT_WATCH_LIMIT = 50;

export default entry(jobsWatch, async (params, { services, connection, afterReply }) => {
  if (connection.watch) throw new ActionError("conflict", "this connection already watches the jobs; jobs.unwatch first");
  // Subscribed before the snapshot is taken, so no change falls between the two.
  const watcher = new JobWatcher(services.jobs, connection.sink);
  watcher.start();
  connection.watch = watcher;
  const list = services.jobs.list({ limit: params.limit ?? DEFAULT_WATCH_LIMIT });
  afterReply(() => watcher.release());
  return list;
});

import { jobsFollow } from "../../protocol/actions/jobs.js";
import { ActionError } from "../../protocol/errors.js";
import { Follower } from "../jobs/follow.js";
import { entry } from "./context.js";

/** A terminal viewer that attaches without `from` gets this much scrollback replayed. */
export const PTY_SCROLLBACK_BYTES = 256 * 1024;
const MAX_FOLLOWS_PER_CONNECTION = 1000;

export default entry(jobsFollow, async (params, { services, connection, afterReply }) => {
  const job = services.jobs.get(params.job);
  if (connection.followers.has(job.id))
    throw new ActionError("conflict", `this connection already follows ${job.id}; jobs.unfollow it first`, { path: "/job" });
  if (connection.followers.size >= MAX_FOLLOWS_PER_CONNECTION)
    throw new ActionError("limit_exceeded", `at most ${MAX_FOLLOWS_PER_CONNECTION} follows per connection`);
  const size = job.log?.size ?? 0;
  const from = params.from ?? (job.record.kind === "terminal" ? Math.max(0, size - PTY_SCROLLBACK_BYTES) : 0);
  const follower = new Follower(job, connection.sink, from, params.stream, params.binary ?? false);
  connection.followers.set(job.id, follower);
  follower.onClose = () => {
    if (connection.followers.get(job.id) === follower) connection.followers.delete(job.id);
  };
  afterReply(() => follower.start());
  return { job: job.status(), from };
});

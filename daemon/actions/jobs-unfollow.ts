import { jobsUnfollow } from "../../protocol/actions/jobs.js";
import { entry } from "./context.js";

export default entry(jobsUnfollow, async (params, { connection }) => {
  const follower = connection.followers.get(params.job);
  const followed = connection.followers.delete(params.job);
  follower?.close();
  return { followed };
});

import { jobsResize } from "../../protocol/actions/jobs.js";
import { ActionError } from "../../protocol/errors.js";
import { entry } from "./context.js";

export default entry(jobsResize, async (params, { services }) => {
  const job = services.jobs.get(params.job);
  if (job.finished) throw new ActionError("conflict", `job ${job.id} has ended (${job.state})`, { path: "/job" });
  if (!job.control.resize)
    throw new ActionError("conflict", `job ${job.id} is not a terminal job; start it with "pty": {"cols": 80, "rows": 24}`, {
      path: "/job",
    });
  job.control.resize(params.cols, params.rows);
  return { cols: params.cols, rows: params.rows };
});

import { jobsStatus } from "../../protocol/actions/jobs.js";
import { jobProcesses } from "../process/index.js";
import { entry } from "./context.js";

export default entry(jobsStatus, async (params, { services }) => {
  const job = services.jobs.get(params.job);
  // A process job's live processes (also after it ended: the strays a cancel is still stopping), so
  // an agent sees what is left without scanning /proc itself. Jobs of an earlier daemon have no control.
  if (job.control.pid === undefined) return job.status();
  const processes = await jobProcesses(job.id);
  return { ...job.status(), processes };
});

import { jobsCancel } from "../../protocol/actions/jobs.js";
import { entry } from "./context.js";

export default entry(jobsCancel, async (params, { services }) => {
  const status = services.jobs.cancel(params.job, (params.signal ?? "SIGTERM") as NodeJS.Signals, params.graceMs ?? 5000);
  if (!params.wait) return status;
  return (await services.jobs.wait(params.job, params.wait)).job;
});

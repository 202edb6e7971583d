import { jobsCancel } from "../../protocol/actions/jobs.js";
import { entry } from "./context.js";

export default entry(jobsCancel, async (params, { services }) =>
  services.jobs.cancel(params.job, (params.signal ?? "SIGTERM") as NodeJS.Signals, params.graceMs ?? 5000),
);

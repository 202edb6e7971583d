import { jobsWait } from "../../protocol/actions/jobs.js";
import { entry } from "./context.js";

export default entry(jobsWait, async (params, { services }) => services.jobs.wait(params.job, params.timeoutMs));

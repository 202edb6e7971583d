import { jobsStatus } from "../../protocol/actions/jobs.js";
import { entry } from "./context.js";

export default entry(jobsStatus, async (params, { services }) => services.jobs.get(params.job).status());

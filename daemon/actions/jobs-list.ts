import { jobsList } from "../../protocol/actions/jobs.js";
import { entry } from "./context.js";

export default entry(jobsList, async (params, { services }) => services.jobs.list(params));

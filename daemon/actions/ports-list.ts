import { portsList } from "../../protocol/actions/ports.js";
import { entry } from "./context.js";
import { ownJobsOnly } from "./ports-jobs.js";

export default entry(portsList, async (_params, { services }) => ({ ports: ownJobsOnly(await services.ports.list(), services.jobs) }));

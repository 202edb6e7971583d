import { DEFAULT_PORT_WAIT_MS, portsWait } from "../../protocol/actions/ports.js";
import { entry } from "./context.js";
import { ownJobsOnly } from "./ports-jobs.js";

export default entry(portsWait, async (params, { services }) => {
  const { listening, listeners } = await services.ports.wait(params.port, params.timeoutMs ?? DEFAULT_PORT_WAIT_MS);
  return { listening, listeners: ownJobsOnly(listeners, services.jobs) };
});

import { stateMetrics } from "../../protocol/actions/state-metrics.js";
import { entry } from "./context.js";

export default entry(stateMetrics, async (params, { services }) => services.metrics.reply(params.sinceMs, params.limit));

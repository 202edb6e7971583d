import { codeContextRestart } from "../../protocol/actions/code.js";
import { statusOf } from "../code/index.js";
import { entry } from "./context.js";

export default entry(codeContextRestart, async (params, { services }) => {
  const context = services.code.find(params.context);
  const { lost, lostTotal } = await context.restart();
  return { context: statusOf(context), lost: lost ?? [], ...(lostTotal !== undefined ? { lostTotal } : {}) };
});

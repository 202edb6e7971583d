import { codeContextRemove } from "../../protocol/actions/code.js";
import { entry } from "./context.js";

export default entry(codeContextRemove, async (params, { services }) => {
  await services.code.remove(params.context);
  return { removed: params.context };
});

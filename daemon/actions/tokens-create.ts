import { tokensCreate } from "../../protocol/actions/tokens-create.js";
import { entry } from "./context.js";

export default entry(tokensCreate, async (params, { services }) => {
  const created = services.tokens.create(params.scope, params.ttlMs, params.label);
  return { ...created, scope: params.scope };
});

import { tokensCreate } from "../../protocol/actions/tokens-create.js";
import { entry } from "./context.js";

export default entry(tokensCreate, async (params, { services, connection }) => {
  const created = await services.tokens.create({
    scope: params.scope,
    ttlMs: params.ttlMs,
    label: params.label,
    issuer: connection.tokenId,
  });
  return { ...created, scope: params.scope };
});

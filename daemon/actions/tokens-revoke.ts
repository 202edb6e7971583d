import { tokensRevoke } from "../../protocol/actions/tokens-manage.js";
import { entry } from "./context.js";

export default entry(tokensRevoke, async (params, { services }) => ({ revoked: await services.tokens.revoke(params.tokenId) }));

import { previewOpen } from "../../protocol/actions/preview.js";
import { entry } from "./context.js";

/** A link to one port: its token opens that port only, for ttlMs, and tokens.revoke ends it. */
export default entry(previewOpen, async (params, { services, connection }) => {
  const reason = services.previews.unavailable();
  if (reason) return { available: false as const, reason };
  const link = await services.previews.issue(params.port, connection.scope, connection.tokenId, params.ttlMs, params.path);
  const { listening } = await services.ports.wait(params.port, 0);
  return { available: true as const, ...link, port: params.port, listening };
});

import { previewOpen } from "../../protocol/actions/preview.js";
import { entry } from "./context.js";

/**
 * A link to one port: its token opens that port only, for ttlMs, and tokens.revoke ends it. With
 * waitMs it first waits for the port to listen (a dev server just started), so the link's life
 * counts from the answer.
 */
export default entry(previewOpen, async (params, { services, connection }) => {
  const reason = services.previews.unavailable();
  if (reason) return { available: false as const, reason };
  services.previews.checkPort(params.port);
  const listening = await services.ports.listening(params.port, params.waitMs ?? 0);
  const link = await services.previews.issue(params.port, connection.scope, connection.tokenId, params.ttlMs, params.path);
  return { available: true as const, ...link, port: params.port, listening };
});

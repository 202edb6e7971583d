import { consoleOpen } from "../../protocol/actions/browser.js";
import { entry } from "./context.js";
import { linkScope } from "./link-scope.js";

/** The console link carries the asking token's scope, or a lower one asked for: an observe link only watches. */
export default entry(consoleOpen, async (params, { services, connection }) => {
  const reason = services.links.unavailable();
  if (reason) return { available: false as const, reason };
  const scope = linkScope(params.scope, connection.scope);
  const link = await services.links.issue("console", scope, connection.tokenId, params.ttlMs);
  return { available: true as const, consoleUrl: link.url, expiresAt: link.expiresAt, tokenId: link.tokenId, scope };
});

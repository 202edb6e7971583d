import { consoleOpen } from "../../protocol/actions/browser.js";
import { entry } from "./context.js";

/** The console link carries the asking token's scope: an observe token mints an observe link only. */
export default entry(consoleOpen, async (params, { services, connection }) => {
  const reason = services.links.unavailable();
  if (reason) return { available: false as const, reason };
  const link = await services.links.issue("console", connection.scope, connection.tokenId, params.ttlMs);
  return { available: true as const, consoleUrl: link.url, expiresAt: link.expiresAt, tokenId: link.tokenId, scope: connection.scope };
});

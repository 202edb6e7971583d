import { desktopOpen } from "../../protocol/actions/desktop.js";
import { entry } from "./context.js";
import { linkScope } from "./link-scope.js";

/** Like console.open: the link carries the asking token's scope or a lower one asked for; an observe link only views. */
export default entry(desktopOpen, async (params, { services, connection }) => {
  const reason = services.links.unavailable() ?? services.desktop.vncUnavailable();
  if (reason) return { available: false as const, reason };
  const scope = linkScope(params.scope, connection.scope);
  const link = await services.links.issue("desktop", scope, connection.tokenId, params.ttlMs);
  return { available: true as const, desktopUrl: link.url, expiresAt: link.expiresAt, tokenId: link.tokenId, scope };
});

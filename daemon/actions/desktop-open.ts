import { desktopOpen } from "../../protocol/actions/desktop.js";
import { entry } from "./context.js";

/** Like console.open: the link carries the asking token's scope, so an observe token's link only views. */
export default entry(desktopOpen, async (params, { services, connection }) => {
  const reason = services.links.unavailable() ?? services.desktop.vncUnavailable();
  if (reason) return { available: false as const, reason };
  const link = await services.links.issue("desktop", connection.scope, connection.tokenId, params.ttlMs);
  return { available: true as const, desktopUrl: link.url, expiresAt: link.expiresAt, tokenId: link.tokenId, scope: connection.scope };
});

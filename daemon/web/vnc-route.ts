import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { VncRelay } from "../desktop/vnc-relay.js";
import type { UpgradeRoute } from "../server/http-routes.js";
import { linkTokenOf, PAGE_SUBPROTOCOL } from "../server/link-protocol.js";
import type { PageAccess } from "../server/page-access.js";
import { checkUpgrade } from "../server/upgrade-guard.js";
import type { TokenStore } from "../tokens/store.js";

/** The desktop page's VNC socket. */
export const VNC_SOCKET_PATH = "/web/vnc";
/** The largest message a viewer may send (RFB client messages are small). */
const MAX_VIEWER_MESSAGE = 1024 * 1024;

function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code: status === 401 ? "unauthorized" : "forbidden", message } });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : "Forbidden"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The upgrade of `/web/vnc`: a browser-link socket under the rules of the other pages (a link
 * token offered as a subprotocol, the daemon's own page origin and host), handed to the relay
 * with the link's scope.
 */
export function vncRoute(relay: VncRelay, tokens: TokenStore, pages: PageAccess): UpgradeRoute {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_VIEWER_MESSAGE,
    perMessageDeflate: false,
    handleProtocols: () => PAGE_SUBPROTOCOL,
  });
  return {
    prefix: VNC_SOCKET_PATH,
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
      if (linkTokenOf(req) === undefined) return refuse(socket, 401, "the desktop socket takes a link token (desktop.open)");
      const verdict = checkUpgrade(req, tokens, [], pages);
      if (!verdict.ok) return refuse(socket, verdict.status, verdict.message);
      wss.handleUpgrade(req, socket, head, (ws) =>
        relay.attach(ws, {
          scope: verdict.scope,
          tokenId: verdict.tokenId,
          ...(verdict.expiresAt !== undefined ? { expiresAt: verdict.expiresAt } : {}),
        }),
      );
    },
  };
}

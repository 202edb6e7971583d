import type { IncomingMessage } from "node:http";

/**
 * Browsers cannot set Authorization on a WebSocket, so a page carries its link token as a
 * subprotocol: it offers ["hotline", "hotline.token.<token>"] and the daemon answers "hotline".
 */
export const PAGE_SUBPROTOCOL = "hotline";
const TOKEN_PREFIX = "hotline.token.";

export function isLinkProtocol(protocol: string): boolean {
  return protocol.startsWith(TOKEN_PREFIX);
}

/** The link token offered in Sec-WebSocket-Protocol, or undefined when none is offered. */
export function linkTokenOf(req: IncomingMessage): string | undefined {
  const header = req.headers["sec-websocket-protocol"];
  if (typeof header !== "string") return undefined;
  const offered = header.split(",").map((p) => p.trim());
  return offered.find(isLinkProtocol)?.slice(TOKEN_PREFIX.length);
}

import type { IncomingMessage } from "node:http";
import { LINK_TOKEN_PREFIX as TOKEN_PREFIX } from "../../protocol/link.js";

export { PAGE_SUBPROTOCOL } from "../../protocol/link.js";

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

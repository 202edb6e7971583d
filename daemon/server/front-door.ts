import type { IncomingMessage, ServerResponse } from "node:http";
import { PROTOCOL_VERSION } from "../../protocol/index.js";

/**
 * What `GET /` answers anyone who has the daemon's address and nothing else: what this is, how to
 * authenticate and the first request to send. It names no path, user or secret of this machine.
 */
export const FRONT_DOOR_TEXT = `hotline: the agent daemon of this sandbox (protocol ${PROTOCOL_VERSION}).

Connect with a WebSocket to this address, sending the header
  Authorization: Bearer <token>
The token is the file hotline/token in the daemon user's config directory
(~/.config/hotline/token by default, mode 0600), or one issued by tokens.create.

Send JSON text frames {"id": 1, "action": "...", ...params}; replies carry the same id.
First request: {"id": 1, "action": "state.guide"} returns the guide's core (the protocol,
jobs, the common actions, errors, and an index of its sections: "section" gives one);
{"id": 2, "action": "state.info"} says what this daemon is.

MCP clients: Streamable HTTP at /mcp with the same Authorization header.
`;

/** Serves FRONT_DOOR_TEXT for GET or HEAD of exactly `/`; false for any other request. */
export function frontDoor(req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== "/" || (req.method !== "GET" && req.method !== "HEAD")) return false;
  res.writeHead(200, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(FRONT_DOOR_TEXT),
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : FRONT_DOOR_TEXT);
  return true;
}

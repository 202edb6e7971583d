/**
 * The browser-link socket. Browsers cannot set Authorization on a WebSocket, so a page carries its
 * link token as a subprotocol: it offers [PAGE_SUBPROTOCOL, LINK_TOKEN_PREFIX + token] and the
 * daemon answers PAGE_SUBPROTOCOL.
 */
export const PAGE_SUBPROTOCOL = "hotline";
export const LINK_TOKEN_PREFIX = "hotline.token.";

/** The close code of a connection whose token expired or was revoked (the reason says which). */
export const CLOSE_TOKEN_INVALID = 4001;

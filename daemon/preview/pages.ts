import type { Duplex } from "node:stream";
import type { RefusalReason } from "./access.js";

/** What the daemon itself answers on a preview host instead of the app. */
export interface PreviewPage {
  status: 401 | 403 | 502 | 503;
  code: "unauthorized" | "forbidden" | "unavailable" | "limit_exceeded";
  title: string;
  message: string;
  details: Record<string, unknown>;
  /** Seconds after which the page reloads itself (the waiting page: the app appears once it listens). */
  reload?: number;
}

// The daemon's own pages on a preview host: no script, nothing loaded, not cached. They may be
// framed, like the app they stand in for (a preview inside another site's iframe shows them).
const PAGE_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

const STATUS_TEXT: Record<PreviewPage["status"], string> = {
  401: "Unauthorized",
  403: "Forbidden",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

const NEW_LINK = (port: number): string =>
  `ask for a new link: the preview.open action with {"port": ${port}}, or \`hotline preview ${port}\` in the sandbox`;

/** The page for a refused token, saying why and how to get a new link. */
export function refusedPage(port: number, reason: RefusalReason, tokenPort?: number): PreviewPage {
  const why: Record<RefusalReason, string> = {
    none: "this address carries no preview token (open the link preview.open gave, not the bare address)",
    wrong: "this preview token is not valid (altered, not a preview token, or from a daemon that restarted since)",
    expired: "this preview link has expired",
    revoked: "this preview link has been revoked (tokens.revoke)",
    port: `this preview link opens port ${tokenPort} only, not port ${port}`,
  };
  return {
    status: reason === "port" ? 403 : 401,
    code: reason === "port" ? "forbidden" : "unauthorized",
    title: "Preview link refused",
    message: `${why[reason]}; ${NEW_LINK(port)}`,
    details: { port, reason, ...(tokenPort !== undefined ? { tokenPort } : {}) },
  };
}

/** The page while nothing listens on the port: it reloads itself until the app answers. */
export function waitingPage(port: number): PreviewPage {
  return {
    status: 502,
    code: "unavailable",
    title: `Waiting for port ${port}`,
    message: `nothing listens on port ${port} in the sandbox yet; this page reloads itself until something does`,
    details: { port, reason: "not_listening" },
    reload: 1,
  };
}

/** Over a preview budget (requests or WebSockets at once, to all previews or to this port). */
export function busyPage(port: number, what: string, limit: number, perPort = false): PreviewPage {
  return {
    status: 503,
    code: "limit_exceeded",
    title: "Preview busy",
    message: `the daemon already proxies ${limit} ${what} to ${perPort ? `port ${port}` : "previews"}; retry when some have finished`,
    details: { port, limit, ...(perPort ? { scope: "port" } : {}) },
  };
}

/** The app accepted the connection and then failed it (reset, closed) before answering. */
export function failedPage(port: number, why: string): PreviewPage {
  return {
    status: 502,
    code: "unavailable",
    title: `Port ${port} did not answer`,
    message: `the server on port ${port} failed the request before a whole answer (${why})`,
    details: { port, reason: "upstream_failed" },
  };
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function render(accept: string | undefined, page: PreviewPage): { type: string; body: string } {
  if (!/\btext\/html\b/.test(accept ?? ""))
    return {
      type: "application/json",
      body: JSON.stringify({ ok: false, error: { code: page.code, message: page.message, details: page.details } }),
    };
  const refresh = page.reload ? `<meta http-equiv="refresh" content="${page.reload}">` : "";
  const body = `<!doctype html><html><head><meta charset="utf-8">${refresh}<title>${escapeHtml(page.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:3em auto;max-width:40em;padding:0 1em;color:#222}code{background:#eee;padding:0 .2em}</style>
</head><body><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p><p><small>hotline preview</small></p></body></html>\n`;
  return { type: "text/html; charset=utf-8", body };
}

/** A raw HTTP response head from a status and header fields. */
export function rawResponse(
  status: number,
  reason: string,
  headers: Record<string, string | number | readonly string[]>,
  body = "",
): string {
  let text = `HTTP/1.1 ${status} ${reason}\r\n`;
  for (const [name, value] of Object.entries(headers)) for (const v of Array.isArray(value) ? value : [value]) text += `${name}: ${v}\r\n`;
  return `${text}\r\n${body}`;
}

/**
 * One of the daemon's own pages as a raw HTTP response (HTML for browsers, JSON otherwise);
 * `close` ends the connection after it (a refused request whose body was not read).
 */
export function pageResponse(page: PreviewPage, accept: string | undefined, method: string, close: boolean): string {
  const { type, body } = render(accept, page);
  const headers: Record<string, string | number> = { ...PAGE_HEADERS, "Content-Type": type, "Content-Length": Buffer.byteLength(body) };
  if (page.reload) headers["Retry-After"] = page.reload;
  if (close) headers.Connection = "close";
  return rawResponse(page.status, STATUS_TEXT[page.status], headers, method === "HEAD" ? "" : body);
}

/** A request the daemon cannot read (a malformed head): 400, 431 or 501, then the connection closes. */
export function malformedResponse(status: 400 | 431 | 501 | 502 | 421, message: string): string {
  const body = JSON.stringify({ ok: false, error: { code: "invalid_request", message } });
  const reason = {
    400: "Bad Request",
    421: "Misdirected Request",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    502: "Bad Gateway",
  }[status];
  return rawResponse(
    status,
    reason,
    { ...PAGE_HEADERS, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), Connection: "close" },
    body,
  );
}

/** The same page (JSON) on an upgrade's socket, which is then closed. */
export function refuseUpgrade(socket: Duplex, page: PreviewPage): void {
  socket.end(pageResponse(page, undefined, "GET", true), "latin1");
}

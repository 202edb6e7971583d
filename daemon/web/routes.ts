import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpRoute } from "../server/http-routes.js";
import type { PageAccess } from "../server/page-access.js";
import { bearerToken } from "../server/upgrade-guard.js";
import type { TokenStore } from "../tokens/store.js";
import { PAGE_FILES, PageAssets, type PageFile } from "./assets.js";

/**
 * Scripts only from the daemon itself (no inline script, no CDN), never framed. Styles also allow
 * inline: xterm.js writes its cell metrics and theme into a <style> element it creates.
 */
export const PAGE_CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The desktop page's policy adds `data:` images, and nothing else: noVNC draws each JPEG rectangle
 * (Tight, the encoding of photos, gradients and anti-aliased text) through an Image with a `data:`
 * URL, and sets its cursor as a `data:` URL; under `default-src 'self'` they were refused and the
 * canvas stayed blank. Scripts stay the daemon's own.
 */
export const DESKTOP_PAGE_CSP = `${PAGE_CSP}; img-src 'self' data:`;

const SECURITY_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
};

const PAGES: Record<string, PageFile> = {
  "/web/terminal": "terminal.html",
  "/web/console": "console.html",
  "/web/desktop": "desktop.html",
};

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, csp = PAGE_CSP): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Security-Policy": csp,
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, code: string, message: string, details?: Record<string, unknown>): void {
  send(res, status, "application/json", JSON.stringify({ ok: false, error: { code, message, ...(details ? { details } : {}) } }));
}

/**
 * Why the page's socket was refused: a browser sees only a failed WebSocket, so the page asks
 * here, with the link token in Authorization (a header, never the URL), and tells an expired or
 * tampered link (401) from a daemon that is merely out of reach.
 */
function linkStatus(req: IncomingMessage, res: ServerResponse, tokens: TokenStore): void {
  const check = tokens.check(bearerToken(req));
  if (check.ok)
    return send(
      res,
      200,
      "application/json",
      JSON.stringify({
        ok: true,
        result: { scope: check.scope, expiresAt: check.expiresAt === undefined ? null : new Date(check.expiresAt).toISOString() },
      }),
    );
  const why =
    check.reason === "expired"
      ? "this link has expired"
      : check.reason === "missing"
        ? "this address carries no link token"
        : "this link is not valid (revoked, expired, or altered)";
  sendError(res, 401, "unauthorized", why, { reason: check.reason });
}

/** The browser pages under /web: the terminal, the console, their assets, and the link check. */
export function pageRoute(access: PageAccess, tokens: TokenStore, assets: PageAssets): HttpRoute {
  return {
    prefix: "/web",
    async handle(req, res) {
      const refused = access.refusedHost(req);
      if (refused) return sendError(res, 403, "forbidden", refused);
      if (req.method !== "GET" && req.method !== "HEAD")
        return sendError(res, 405, "invalid_request", `${req.method} is not served here; the pages answer GET`);
      const path = (req.url ?? "/").split("?")[0]!;
      if (path === "/web/link") return linkStatus(req, res, tokens);
      const asset = path.startsWith("/web/assets/")
        ? PAGE_FILES.find((f) => `/web/assets/${f}` === path && !f.endsWith(".html"))
        : undefined;
      const file = PAGES[path] ?? asset;
      if (!file)
        return sendError(
          res,
          404,
          "not_found",
          `no page ${path.slice(0, 200)}; the pages are /web/terminal and /web/console (open them with the link of terminal.open or console.open)`,
        );
      let body: Buffer;
      try {
        body = await assets.read(file);
      } catch {
        return sendError(res, 503, "unavailable", assets.missing() ?? `${file} could not be read`);
      }
      // Node leaves the body out of a HEAD reply.
      send(res, 200, PageAssets.contentType(file), body, file === "desktop.html" ? DESKTOP_PAGE_CSP : PAGE_CSP);
    },
  };
}

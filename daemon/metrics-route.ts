import type { PrometheusExposition } from "./metrics/prometheus.js";
import { type HttpRoute, sendJson } from "./server/http-routes.js";
import { checkUpgrade } from "./server/upgrade-guard.js";
import type { TokenStore } from "./tokens/store.js";

export interface MetricsRouteOptions {
  tokens: TokenStore;
  allowedOrigins: readonly string[];
  exposition: PrometheusExposition;
}

/**
 * GET /metrics: the Prometheus text exposition, on the daemon's port. A token of scope observe or
 * manage as `Authorization: Bearer`, checked like the WebSocket upgrade's (a browser link's token
 * is refused: it opens its page only); a foreign Origin is refused too. Nothing in the answer
 * depends on who asks, and scrapes within a second share one rendering.
 */
export function metricsRoute(options: MetricsRouteOptions): HttpRoute {
  return {
    prefix: "/metrics",
    async handle(req, res, admit) {
      const verdict = checkUpgrade(req, options.tokens, options.allowedOrigins);
      if (!verdict.ok) return sendJson(res, verdict.status, verdict.code, verdict.message);
      if ((req.url ?? "").split("?")[0] !== "/metrics") return sendJson(res, 404, "not_found", "the metrics are at /metrics");
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.setHeader("Allow", "GET, HEAD");
        return sendJson(res, 405, "invalid_request", "GET /metrics");
      }
      admit();
      const body = await options.exposition.text();
      res.writeHead(200, {
        "Content-Type": options.exposition.contentType,
        "Content-Length": Buffer.byteLength(body),
        "Cache-Control": "no-store",
      });
      res.end(req.method === "HEAD" ? undefined : body);
    },
  };
}

import type { IncomingMessage } from "node:http";
import { PREVIEW_HEADER } from "../../protocol/actions/preview.js";

/** Headers of one hop only (RFC 9110 §7.6.1): never forwarded as they came. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
/** Headers the daemon sets itself on the way to the app. */
const OWN = new Set(["host", "cookie", PREVIEW_HEADER, "x-forwarded-host", "x-forwarded-proto", "x-forwarded-for"]);

/** What the app is told about the request: its port, and the address the browser used. */
export interface ForwardTarget {
  port: number;
  /** `http://5173.localhost:7070` or the template's origin, as the client's Host header named it. */
  publicOrigin: string;
  proto: "http" | "https";
}

/** Header names the Connection header lists: hop-by-hop too. */
function connectionTokens(headers: IncomingMessage["headers"]): Set<string> {
  const value = headers.connection;
  return new Set((Array.isArray(value) ? value.join(",") : (value ?? "")).split(",").map((t) => t.trim().toLowerCase()));
}

/**
 * The request's headers as the app gets them (a flat raw list, names as the client spelled them):
 * as if made to `localhost:<port>` — Host rewritten, an Origin of the preview itself rewritten to
 * match (an app that compares Origin with Host, as Jupyter's WebSocket does, then agrees), the
 * public address in X-Forwarded-Host/-Proto/-For — and without the daemon's token header and
 * cookie (`cookie` is the Cookie header already stripped of it). `upgrade` keeps Connection/Upgrade.
 */
export function requestHeaders(req: IncomingMessage, target: ForwardTarget, cookie: string | undefined, upgrade: boolean): string[] {
  const dropped = connectionTokens(req.headers);
  const raw = req.rawHeaders;
  const out = ["Host", `localhost:${target.port}`];
  const forwardedFor: string[] = [];
  const origin = target.publicOrigin.toLowerCase();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === "x-forwarded-for") forwardedFor.push(value);
    if (OWN.has(lower)) continue;
    if (upgrade && (lower === "connection" || lower === "upgrade")) {
      out.push(name, value);
      continue;
    }
    // A chunked request body stays chunked: Node frames what is piped into it when the header says so.
    if (!upgrade && lower === "transfer-encoding" && value.trim().toLowerCase() === "chunked") {
      out.push(name, value);
      continue;
    }
    if (HOP_BY_HOP.has(lower) || dropped.has(lower)) continue;
    out.push(name, lower === "origin" && value.toLowerCase() === origin ? `http://localhost:${target.port}` : value);
  }
  if (cookie !== undefined) out.push("Cookie", cookie);
  const client = req.socket.remoteAddress ?? "";
  out.push(
    "X-Forwarded-Host",
    req.headers.host ?? "",
    "X-Forwarded-Proto",
    target.proto,
    "X-Forwarded-For",
    [...forwardedFor, client].filter(Boolean).join(", "),
  );
  return out;
}

/**
 * The app's response headers as the client gets them: untouched (no CORS or other header added),
 * but for the hop-by-hop ones and a Location that points at `localhost:<port>` (or a loopback
 * address with that port), which is rewritten to the preview's own address.
 */
export function responseHeaders(raw: readonly string[], headers: IncomingMessage["headers"], target: ForwardTarget): string[] {
  const dropped = connectionTokens(headers);
  const local = new RegExp(`^https?://(?:localhost|127\\.0\\.0\\.1|\\[::1\\]|0\\.0\\.0\\.0):${target.port}(?=[/?#]|$)`, "i");
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || dropped.has(lower)) continue;
    out.push(name, lower === "location" ? raw[i + 1]!.replace(local, target.publicOrigin) : raw[i + 1]!);
  }
  return out;
}

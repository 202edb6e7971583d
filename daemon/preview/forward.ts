import { PREVIEW_HEADER, PREVIEW_QUERY_PARAM } from "../../protocol/actions/preview.js";
import { stripQueryToken } from "./access.js";
import { type RawHeaders, type ResponseHead, tokenSet } from "./http1/head.js";

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

/** Header names a Connection field lists beyond its usual tokens (those name hop-by-hop fields already). */
function listed(connection: string): ReadonlySet<string> | undefined {
  if (connection === "" || connection === "keep-alive" || connection === "close" || connection === "upgrade") return undefined;
  return tokenSet(connection);
}

/** What the app is told about the request: its port, and the address the browser used. */
export interface ForwardTarget {
  port: number;
  /** `http://5173.localhost:7070` or the template's origin, as the client's Host header named it. */
  publicOrigin: string;
  proto: "http" | "https";
  /** The client's Host header as sent. */
  publicHost: string;
  /** The client's address (X-Forwarded-For). */
  remoteAddress: string;
}

/** What the request to the app carries besides its headers. */
export interface ForwardRequest {
  method: string;
  /** The request target without the daemon's query parameter. */
  path: string;
  minor: 0 | 1;
  headers: RawHeaders;
  /** The Connection field, lower case. */
  connection: string;
  /** The Cookie header without the daemon's cookie. */
  cookie: string | undefined;
  upgrade: boolean;
}

/**
 * The request head as the app gets it (names as the client spelled them): as if made to
 * `localhost:<port>` — Host rewritten, an Origin of the preview itself rewritten to match (an app
 * that compares Origin with Host, as Jupyter's WebSocket does, then agrees), the public address in
 * X-Forwarded-Host/-Proto/-For — and without the daemon's token header and cookie. An upgrade keeps
 * Connection/Upgrade; a chunked body stays chunked (its bytes are forwarded as they came); an
 * HTTP/1.0 request stays HTTP/1.0 and closes after its answer.
 */
export function requestHead(r: ForwardRequest, target: ForwardTarget): string {
  const dropped = listed(r.connection);
  const raw = r.headers;
  let head = `${r.method} ${r.path} HTTP/1.${r.minor}\r\nHost: localhost:${target.port}\r\n`;
  let forwardedFor = "";
  const origin = target.publicOrigin.toLowerCase();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === "x-forwarded-for") forwardedFor += `${value}, `;
    if (OWN.has(lower)) continue;
    const kept =
      (r.upgrade && (lower === "connection" || lower === "upgrade")) ||
      (!r.upgrade && lower === "transfer-encoding") ||
      !(HOP_BY_HOP.has(lower) || dropped?.has(lower));
    if (!kept) continue;
    head += `${name}: ${lower === "origin" || lower === "referer" ? forOrigin(lower, value, origin, target.port) : value}\r\n`;
  }
  if (r.cookie !== undefined) head += `Cookie: ${r.cookie}\r\n`;
  if (r.minor === 0 && !r.upgrade) head += "Connection: close\r\n";
  return `${head}X-Forwarded-Host: ${target.publicHost}\r\nX-Forwarded-Proto: ${target.proto}\r\nX-Forwarded-For: ${forwardedFor}${target.remoteAddress}\r\n\r\n`;
}

/**
 * An Origin of the preview itself, as the app's own (`http://localhost:<port>`); a Referer without
 * the link's token (a page opened by the link as given, token in its address, sends it along).
 */
function forOrigin(lower: string, value: string, origin: string, port: number): string {
  if (lower === "origin") return value.toLowerCase() === origin ? `http://localhost:${port}` : value;
  return value.includes(PREVIEW_QUERY_PARAM) ? stripQueryToken(value).url : value;
}

const localOrigins = new Map<number, RegExp>();

/** `http://localhost:<port>` and its loopback spellings at the start of a Location value. */
function localOrigin(port: number): RegExp {
  let re = localOrigins.get(port);
  if (!re) {
    re = new RegExp(`^https?://(?:localhost|127\\.0\\.0\\.1|\\[::1\\]|0\\.0\\.0\\.0):${port}(?=[/?#]|$)`, "i");
    if (localOrigins.size >= 1024) localOrigins.clear();
    localOrigins.set(port, re);
  }
  return re;
}

/**
 * The app's response head as the client gets it: its headers untouched (no CORS or other header
 * added) but for the hop-by-hop ones and a Location that points at `localhost:<port>` (or a
 * loopback address with that port), which is rewritten to the preview's own address. The body's
 * framing is forwarded as it came (`Transfer-Encoding` kept); a `Content-Length` beside a
 * `Transfer-Encoding` is dropped (RFC 9112 §6.3: the coding wins, and a client must not see two
 * framings). `close` says the daemon closes the client's connection after it.
 */
export function responseHead(response: ResponseHead, target: ForwardTarget, close: boolean): string {
  const dropped = listed(response.connection);
  const raw = response.headers;
  const coded = response.transferEncoding !== undefined;
  let head = `HTTP/1.1 ${response.status} ${response.reason}\r\n`;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower !== "transfer-encoding" && (HOP_BY_HOP.has(lower) || dropped?.has(lower))) continue;
    if (coded && lower === "content-length") continue;
    head += `${name}: ${lower === "location" ? raw[i + 1]!.replace(localOrigin(target.port), target.publicOrigin) : raw[i + 1]!}\r\n`;
  }
  return `${head}${close ? "Connection: close\r\n" : ""}\r\n`;
}

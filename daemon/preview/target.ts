import { HeadError } from "./http1/head.js";

const ABSOLUTE = /^(https?):\/\/([^/?#]*)([^#]*)$/i;

/** A host[:port] lower case, without the scheme's default port. */
function authority(text: string, scheme: string): string {
  const lower = text.toLowerCase();
  const port = scheme === "https" ? ":443" : ":80";
  return lower.endsWith(port) ? lower.slice(0, -port.length) : lower;
}

/**
 * The request target as the app gets it: origin-form (`/path?query`). An absolute-form target
 * (`http://5173.localhost:7070/x`, which HTTP/1.1 servers must accept) becomes its path and query
 * when its authority is the Host the request was routed by, and is refused (400) when it names
 * another: the app would otherwise read a target the proxy never checked. `*` passes for OPTIONS;
 * any other form (CONNECT's `host:port`) is refused.
 */
export function originForm(method: string, target: string, host: string): string {
  if (target.startsWith("/")) return target;
  if (target === "*" && method === "OPTIONS") return target;
  const m = ABSOLUTE.exec(target);
  if (!m) throw new HeadError(400, "the request target is not a path (origin-form) or an absolute URL of this host");
  const scheme = m[1]!.toLowerCase();
  if (m[2]!.includes("@") || authority(m[2]!, scheme) !== authority(host, scheme))
    throw new HeadError(400, `the request target names ${JSON.stringify(m[2]!.slice(0, 100))}, not this request's Host`);
  const rest = m[3]!;
  return rest.startsWith("/") ? rest : `/${rest}`;
}

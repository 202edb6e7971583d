import type { IncomingMessage } from "node:http";

/**
 * Who may use the browser pages and their socket. `Host` must name this daemon (a page served
 * under another name is a DNS-rebinding attempt), and a browser-link socket must come from the
 * daemon's own page origin: the publicUrl's, or the very host the request was sent to.
 */
export class PageAccess {
  private readonly hosts: Set<string>;
  private readonly publicOrigin: string | undefined;

  constructor(allowedHosts: readonly string[], publicUrl: string | undefined, boundHost: string) {
    this.publicOrigin = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
    const extra = [publicUrl === undefined ? undefined : new URL(publicUrl).hostname, isWildcard(boundHost) ? undefined : boundHost];
    this.hosts = new Set([...allowedHosts, ...extra].filter((h): h is string => !!h).map(normalizeHost));
  }

  /** Why this request's Host is refused, or undefined when the daemon answers for it. */
  refusedHost(req: IncomingMessage): string | undefined {
    const host = req.headers.host;
    if (!host) return "the request has no Host header";
    const name = hostName(host);
    if (name !== undefined && this.hosts.has(name)) return undefined;
    return `host ${JSON.stringify(host.slice(0, 200))} is not one this daemon answers for (allowedHosts: ${[...this.hosts].join(", ")}; set publicUrl or --allow-host)`;
  }

  /** Whether `origin` is the daemon's own page origin for this request (its Host was checked first). */
  ownOrigin(origin: string | undefined, req: IncomingMessage): boolean {
    if (origin === undefined) return false;
    if (origin === this.publicOrigin) return true;
    const host = req.headers.host?.toLowerCase();
    return host !== undefined && origin.toLowerCase() === `http://${host}`;
  }
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "";
}

/** A host name without brackets or port, lower case; undefined when it does not parse. */
function hostName(header: string): string | undefined {
  try {
    return normalizeHost(new URL(`http://${header}`).hostname);
  } catch {
    return undefined;
  }
}

function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
}

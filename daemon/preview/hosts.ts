import type { IncomingMessage } from "node:http";
import { ActionError } from "../../protocol/errors.js";

/** Where a preview host came from: the loopback `<port>.localhost` names, or the previewUrl template. */
export interface PreviewHost {
  port: number;
  /** The scheme the browser used: the template's, `http` for loopback names. */
  proto: "http" | "https";
  /** Whether browsers treat the origin as secure (https, or a `*.localhost` name), so a `Secure` cookie sticks. */
  secure: boolean;
}

const LOOPBACK_NAME = /^(\d{1,5})\.localhost$/;
const LOOPBACK_HOST = /^(\d{1,5})\.localhost(?::\d{1,5})?$/;
const PLACEHOLDER = "{port}";

function portNumber(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** The host name of a Host header, lower case, without port or brackets; undefined when it does not parse. */
function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  try {
    return new URL(`http://${header}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Checks a previewUrl template (`https://{port}-sandbox.example`): http(s), `{port}` once in the host name, nothing after it. */
export function checkPreviewTemplate(raw: string): { proto: "http" | "https"; prefix: string; suffix: string; authority: string } {
  const bad = (why: string): ActionError =>
    new ActionError(
      "invalid_request",
      `previewUrl ${JSON.stringify(raw)} ${why}; it is an address with {port} in the host name, e.g. https://{port}-sandbox.example`,
    );
  const m = /^(https?):\/\/([^/?#]*)\/?$/.exec(raw);
  if (!m) throw bad("is not an http:// or https:// address without path, query or fragment");
  const authority = m[2]!.toLowerCase();
  const parts = /^([^:@]+)(:\d{1,5})?$/.exec(authority);
  const name = parts?.[1] ?? "";
  const at = name.indexOf(PLACEHOLDER);
  if (at < 0 || name.indexOf(PLACEHOLDER, at + 1) >= 0) throw bad("must hold {port} exactly once, in the host name");
  try {
    new URL(`${m[1]}://${authority.replace(PLACEHOLDER, "1")}`);
  } catch {
    throw bad("does not parse as a URL");
  }
  return { proto: m[1] as "http" | "https", prefix: name.slice(0, at), suffix: name.slice(at + PLACEHOLDER.length), authority };
}

/**
 * Which requests are previews, and the address of a port's preview. Routing is by host, so a
 * page's absolute paths (`/@vite/client`, `/_next/…`) stay the app's: `<port>.localhost` (which
 * Chromium, Firefox and curl resolve to loopback) on a loopback daemon, and the previewUrl
 * template's hosts. A host the daemon answers for itself (allowedHosts, publicUrl) is never a preview.
 */
export class PreviewHosts {
  private readonly template: ReturnType<typeof checkPreviewTemplate> | undefined;
  private readonly own: Set<string>;
  /** An own host spelled `<digits>.localhost` (then every such name takes the careful path). */
  private readonly ownLoopbackNames: boolean;
  private daemonPort: number | undefined;
  private loopback = false;

  constructor(previewUrl: string | undefined, ownHosts: readonly string[]) {
    this.template = previewUrl === undefined ? undefined : checkPreviewTemplate(previewUrl);
    this.own = new Set(ownHosts.map((h) => h.toLowerCase().replace(/^\[(.*)\]$/, "$1")));
    this.ownLoopbackNames = [...this.own].some((h) => LOOPBACK_NAME.test(h));
  }

  /** The daemon's own address, once it listens: loopback names work when it listens on loopback. */
  listening(httpUrl: string): void {
    const url = new URL(httpUrl);
    this.daemonPort = Number(url.port);
    this.loopback = ["127.0.0.1", "[::1]", "0.0.0.0", "[::]", "localhost"].includes(url.hostname) || url.hostname.startsWith("127.");
  }

  /** The daemon's own port: never previewed (the proxy would hand the API to a preview link). */
  get ownPort(): number | undefined {
    return this.daemonPort;
  }

  /** The preview a request is addressed to, or undefined when its Host is not a preview host. */
  of(req: IncomingMessage): PreviewHost | undefined {
    return this.ofHost(req.headers.host);
  }

  /** The preview a Host header names, or undefined when it is not a preview host. */
  ofHost(host: string | undefined): PreviewHost | undefined {
    // The common spelling, `5173.localhost:7070`, without parsing a URL for every request.
    const quick = host === undefined ? null : LOOPBACK_HOST.exec(host);
    if (quick && !this.ownLoopbackNames) {
      const port = portNumber(quick[1]!);
      return port === undefined ? undefined : { port, proto: "http", secure: true };
    }
    const name = hostName(host);
    if (name === undefined || this.own.has(name)) return undefined;
    const loop = LOOPBACK_NAME.exec(name);
    if (loop) {
      const port = portNumber(loop[1]!);
      return port === undefined ? undefined : { port, proto: "http", secure: true };
    }
    const t = this.template;
    if (!t || name.length <= t.prefix.length + t.suffix.length || !name.startsWith(t.prefix) || !name.endsWith(t.suffix)) return undefined;
    const port = portNumber(name.slice(t.prefix.length, name.length - t.suffix.length));
    return port === undefined ? undefined : { port, proto: t.proto, secure: t.proto === "https" };
  }

  /** Why preview links cannot be made now, or undefined. */
  unavailable(): string | undefined {
    if (this.template) return undefined;
    if (this.daemonPort === undefined) return "the daemon is not listening yet";
    if (!this.loopback)
      return "the daemon listens on a non-loopback address only, where <port>.localhost does not reach it; set previewUrl (e.g. https://{port}-sandbox.example)";
    return undefined;
  }

  /** The origin of a port's preview: the template's, else `http://<port>.localhost:<daemon port>`. */
  origin(port: number): string {
    if (this.template) return `${this.template.proto}://${this.template.authority.replace(PLACEHOLDER, String(port))}`;
    return `http://${port}.localhost:${this.daemonPort}`;
  }
}

import type { Logger } from "pino";
import type { TokenStore } from "../tokens/store.js";
import { PreviewHosts } from "./hosts.js";
import { PreviewLinks } from "./links.js";
import { PortTable } from "./ports.js";
import { type PreviewLimits, PreviewProxy } from "./proxy.js";

export { PortTable } from "./ports.js";
export { PreviewLinks } from "./links.js";

/** What main.ts wires for previews: the port table and links for the actions, the proxy for the server. */
export interface PreviewFeature {
  ports: PortTable;
  links: PreviewLinks;
  proxy: PreviewProxy;
  /** The daemon's own address, once it listens (the links' `<port>.localhost:<daemon port>`). */
  listening(wsUrl: string): void;
}

export function createPreview(options: {
  previewUrl: string | undefined;
  /** Hosts the daemon answers for itself (allowedHosts, the publicUrl host): never previews. */
  ownHosts: readonly string[];
  tokens: TokenStore;
  log: Logger;
  limits?: Partial<PreviewLimits>;
}): PreviewFeature {
  const hosts = new PreviewHosts(options.previewUrl, options.ownHosts);
  const ports = new PortTable();
  return {
    ports,
    links: new PreviewLinks(options.tokens, hosts),
    proxy: new PreviewProxy(hosts, options.tokens, ports, options.log.child({ part: "preview" }), options.limits),
    listening: (wsUrl) => hosts.listening(wsUrl.replace(/^ws/, "http")),
  };
}

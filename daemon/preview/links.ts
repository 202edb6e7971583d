import { DEFAULT_PREVIEW_TTL_MS, PREVIEW_QUERY_PARAM } from "../../protocol/actions/preview.js";
import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import type { TokenStore } from "../tokens/store.js";
import type { PreviewHosts } from "./hosts.js";

/** Mints preview links: a `preview` token bound to one port, in the query of that port's preview address. */
export class PreviewLinks {
  constructor(
    private readonly tokens: TokenStore,
    private readonly hosts: PreviewHosts,
  ) {}

  /** Why no link can be made now, or undefined. */
  unavailable(): string | undefined {
    return this.hosts.unavailable();
  }

  /** Refuses a port no link may open: the daemon's own. */
  checkPort(port: number): void {
    if (port === this.hosts.ownPort)
      throw new ActionError("invalid_request", `port ${port} is the daemon's own; a preview opens a server the jobs run`, {
        path: "/port",
      });
  }

  async issue(
    port: number,
    scope: Scope,
    issuer: string,
    ttlMs: number | undefined,
    path = "/",
  ): Promise<{ url: string; expiresAt: string; tokenId: string }> {
    this.checkPort(port);
    const { token, id, expiresAt } = await this.tokens.create({
      scope,
      ttlMs: ttlMs ?? DEFAULT_PREVIEW_TTL_MS,
      label: "preview",
      use: "preview",
      port,
      issuer,
    });
    const hash = path.indexOf("#");
    const [pathAndQuery, fragment] = hash < 0 ? [path, ""] : [path.slice(0, hash), path.slice(hash)];
    const joiner = pathAndQuery.includes("?") ? "&" : "?";
    return { url: `${this.hosts.origin(port)}${pathAndQuery}${joiner}${PREVIEW_QUERY_PARAM}=${token}${fragment}`, expiresAt, tokenId: id };
  }
}

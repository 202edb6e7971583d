import type { Scope } from "../../protocol/define.js";
import { DEFAULT_LINK_TTL_MS } from "../../protocol/actions/browser.js";
import type { TokenStore } from "../tokens/store.js";
import type { PageAssets } from "./assets.js";

export type LinkPage = "terminal" | "console" | "desktop";

/**
 * Mints the links of terminal.open and console.open: a token of its own (scoped like the asking
 * token, never outliving it, revoked with it or by tokens.revoke, unable to issue tokens itself)
 * carried in the URL fragment, which a browser
 * never sends to a server, so it reaches no request line and no log.
 */
export class PageLinks {
  private base: string | undefined;

  constructor(
    private readonly tokens: TokenStore,
    private readonly publicUrl: string | undefined,
    private readonly assets: PageAssets,
  ) {}

  /** The daemon's own address, once it listens: the links' base when no publicUrl is set. */
  listening(wsUrl: string): void {
    const url = new URL(wsUrl.replace(/^ws/, "http"));
    // A wildcard bind is reached on loopback from this machine.
    if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
    if (url.hostname === "[::]") url.hostname = "[::1]";
    this.base = url.origin;
  }

  /** The address clients reach the daemon at (publicUrl, else its own), http(s); undefined before it listens. */
  baseUrl(): string | undefined {
    return this.publicUrl ?? this.base;
  }

  /** Why links cannot be served now, or undefined. */
  unavailable(): string | undefined {
    if (this.publicUrl === undefined && this.base === undefined) return "the daemon is not listening yet";
    return this.assets.missing();
  }

  /** Throws what `issue` would for this asker (a link's token, a full budget): checked before a terminal is started for it. */
  checkIssue(scope: Scope, issuer: string): void {
    this.tokens.checkIssue({ scope, issuer });
  }

  async issue(
    page: LinkPage,
    scope: Scope,
    issuer: string,
    ttlMs: number | undefined,
    fragment: Record<string, string> = {},
  ): Promise<{ url: string; expiresAt: string; tokenId: string }> {
    // A link opens its page: its token may not issue tokens or links of its own (guide: Browser links).
    const { token, id, expiresAt } = await this.tokens.create({
      scope,
      ttlMs: ttlMs ?? DEFAULT_LINK_TTL_MS,
      label: `${page} link`,
      issuer,
      pageOnly: true,
    });
    const hash = new URLSearchParams({ ...fragment, token }).toString();
    return { url: `${this.publicUrl ?? this.base}/web/${page}#${hash}`, expiresAt, tokenId: id };
  }
}

import { DEFAULT_LINK_TTL_MS } from "../../protocol/actions/browser.js";
import { browserOpen } from "../../protocol/actions/desktop.js";
import { ActionError } from "../../protocol/errors.js";
import { CDP_PREFIX } from "../desktop/cdp-relay.js";
import { listPages, openTab } from "../desktop/chromium.js";
import { entry } from "./context.js";

/** Chromium starts once; each call mints a CDP URL of its own (a `cdp` token, revocable, expiring). */
export default entry(browserOpen, async (params, { services, connection }) => {
  const screen = await services.desktop.screen();
  const base = services.links.baseUrl();
  if (!base) throw new ActionError("unavailable", "the daemon is not listening yet");
  const devtools = await services.desktop.browser.ensure(screen.display);
  if (params.url) await openTab(devtools, params.url);
  const { token, id, expiresAt } = await services.tokens.create({
    scope: "manage",
    ttlMs: params.ttlMs ?? DEFAULT_LINK_TTL_MS,
    label: "cdp",
    use: "cdp",
    issuer: connection.tokenId,
  });
  const cdpUrl = `${base.replace(/^http/, "ws")}${CDP_PREFIX}/${token}${devtools.browserPath}`;
  return { cdpUrl, expiresAt, tokenId: id, pid: devtools.pid, pages: await listPages(devtools) };
});

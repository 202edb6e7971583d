// The desktop page: noVNC's client on the daemon's VNC socket (/web/vnc), authorised by the link's
// token. An observe link shows the screen only; the daemon drops its input whatever this page sends.
import rfbModule from "@novnc/novnc/lib/rfb.js";
import { LINK_TOKEN_PREFIX, PAGE_SUBPROTOCOL } from "../protocol/link.js";
import { checkLink, readLink, showLinkRefused } from "./link.js";

// The package is CommonJS: its class is `exports.default`, which a bundler may hand over as the module itself.
const RFB = (rfbModule as unknown as { default?: typeof rfbModule }).default ?? rfbModule;
const status = document.getElementById("status")!;

function vncUrl(): string {
  const url = new URL("vnc", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.hash = "";
  return url.href;
}

async function main(): Promise<void> {
  const link = readLink();
  if (!link) return showLinkRefused("desktop", "this address carries no link token");
  const check = await checkLink(link);
  if (check.state === "refused") return showLinkRefused("desktop", check.message);
  const socket = new WebSocket(vncUrl(), [PAGE_SUBPROTOCOL, `${LINK_TOKEN_PREFIX}${link.token}`]);
  socket.binaryType = "arraybuffer";
  const rfb = new RFB(document.getElementById("screen")!, socket, { shared: true });
  rfb.viewOnly = check.state === "valid" && check.scope === "observe";
  rfb.scaleViewport = true;
  rfb.qualityLevel = 9;
  rfb.addEventListener("connect", () => (status.textContent = rfb.viewOnly ? "connected (view only)" : "connected"));
  rfb.addEventListener("disconnect", () => (status.textContent = "disconnected: reload the page, or get a new link if it has expired"));
  (window as unknown as { hotline: unknown }).hotline = { rfb };
}

void main();

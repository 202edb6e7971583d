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

/** Shows the password form; its answer goes to the VNC server once. */
function askPassword(send: (password: string) => void): void {
  const form = document.getElementById("vnc-password") as HTMLFormElement;
  const input = form.elements.namedItem("password") as HTMLInputElement;
  status.textContent = "the VNC server asks for its password";
  form.hidden = false;
  input.focus();
  form.onsubmit = (event) => {
    event.preventDefault(); // nothing is submitted anywhere: the password goes over the VNC stream
    form.hidden = true;
    status.textContent = "connecting…";
    send(input.value);
    input.value = "";
  };
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
  // A VNC server with a password (VNC authentication) asks the person; the daemon only relays it.
  rfb.addEventListener("credentialsrequired", () => askPassword((password) => rfb.sendCredentials({ password })));
  rfb.addEventListener("disconnect", () => (status.textContent = "disconnected: reload the page, or get a new link if it has expired"));
  (window as unknown as { hotline: unknown }).hotline = { rfb };
}

void main();

// What both pages share: the link in the fragment, the socket it opens, and the page shown when
// the link no longer holds.
import { LinkConnection, type LinkSocketConstructor } from "../client/link-connection.js";
import { CLOSE_TOKEN_INVALID } from "../protocol/link.js";

export interface Link {
  token: string;
  params: URLSearchParams;
}

/** The link's token and fields, from the fragment (which the browser never sends to a server). */
export function readLink(): Link | undefined {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  return token ? { token, params } : undefined;
}

/** The daemon's socket address: the same origin (and path prefix) the page came from. */
function socketUrl(): string {
  const url = new URL("../", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.hash = "";
  return url.href;
}

export function openSocket(link: Link): Promise<LinkConnection> {
  return LinkConnection.open(socketUrl(), link.token, WebSocket as unknown as LinkSocketConstructor);
}

export type LinkCheck =
  | { state: "valid"; scope: "manage" | "observe"; expiresAt: string | null }
  | { state: "refused"; message: string }
  | { state: "unreachable" };

/**
 * Asks the daemon whether the link's token holds. A refused WebSocket upgrade looks like any
 * network failure to a page; this answer (401 for a token that does not hold) tells them apart.
 */
export async function checkLink(link: Link): Promise<LinkCheck> {
  try {
    const res = await fetch(new URL("link", location.href).pathname, {
      headers: { Authorization: `Bearer ${link.token}` },
      cache: "no-store",
    });
    const body = (await res.json()) as {
      ok: boolean;
      result?: { scope: "manage" | "observe"; expiresAt: string | null };
      error?: { message: string };
    };
    if (res.status === 401) return { state: "refused", message: body.error?.message ?? "this link is not valid" };
    if (body.ok && body.result) return { state: "valid", ...body.result };
    return { state: "unreachable" };
  } catch {
    return { state: "unreachable" };
  }
}

/** Replaces the page with the explanation of a link that no longer holds, and how to get a new one. */
export function showLinkRefused(what: "terminal" | "console" | "desktop", message: string): void {
  document.title = `hotline ${what}: link not valid`;
  document.body.className = "refused";
  document.body.replaceChildren();
  const box = document.createElement("main");
  box.id = "link-refused";
  const h1 = document.createElement("h1");
  h1.textContent = "This link no longer works";
  const p1 = document.createElement("p");
  p1.textContent = `${message[0]?.toUpperCase() ?? ""}${message.slice(1)}. Links to the ${what} are short-lived (15 minutes by default) and can be revoked.`;
  const p2 = document.createElement("p");
  p2.textContent = "Get a new one:";
  const pre = document.createElement("pre");
  pre.textContent =
    what === "terminal"
      ? "hotline terminal --url        # or the action terminal.open"
      : what === "desktop"
        ? "hotline desktop               # or the action desktop.open"
        : "hotline console               # or the action console.open";
  box.append(h1, p1, p2, pre);
  document.body.append(box);
}

/** Milliseconds to wait before reconnect attempt `n` (0-based): 250 ms doubling, at most 5 s. */
export function backoff(n: number): number {
  return Math.min(5000, 250 * 2 ** n);
}

/** Bytes of a job.output event's data, so a resumed follow starts right after what was shown. */
export function decodeOutput(data: string, encoding: "utf8" | "base64"): Uint8Array {
  if (encoding === "utf8") return new TextEncoder().encode(data);
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Keeps the link's socket open: runs `session` on each new connection, and after a drop reconnects
 * with back-off, until `done()` or the link no longer holds (then the explanatory page is shown).
 */
export async function keepConnected(
  link: Link,
  what: "terminal" | "console",
  say: (text: string) => void,
  session: (conn: LinkConnection) => Promise<void>,
  done: () => boolean = () => false,
): Promise<void> {
  for (let attempt = 0; !done(); attempt++) {
    let conn: LinkConnection;
    try {
      conn = await openSocket(link);
    } catch {
      const check = await checkLink(link);
      if (check.state === "refused") return showLinkRefused(what, check.message);
      say(`reconnecting to the daemon… (attempt ${attempt + 1})`);
      await new Promise((r) => setTimeout(r, backoff(attempt)));
      continue;
    }
    attempt = -1;
    const closed = new Promise<{ code: number; reason: string }>((resolve) => conn.onClose((code, reason) => resolve({ code, reason })));
    await session(conn);
    const { code, reason } = await closed;
    if (code === CLOSE_TOKEN_INVALID) return showLinkRefused(what, reason || "this link has expired");
  }
}

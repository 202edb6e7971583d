import { connect } from "node:net";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type { TokenStore } from "../tokens/store.js";
import { displayNumber } from "./display.js";
import { ObserveFilter } from "./rfb-filter.js";

/** What the daemon lets queue towards a slow viewer before it stops reading the VNC server. */
const HIGH_WATER = 4 * 1024 * 1024;
/** Desktop viewers at most, across every link. */
const MAX_VIEWERS = 16;

/** One authorised viewer socket: its link's scope and token. */
export interface Viewer {
  scope: "manage" | "observe";
  tokenId: string;
  expiresAt?: number;
}

/** host:port of the VNC server: the setting, else 127.0.0.1:5900+N for display :N (the VNC convention). */
export function vncAddress(setting: string | undefined, display: string | undefined): { host: string; port: number } | undefined {
  if (setting) {
    const m = /^(.*):(\d+)$/.exec(setting);
    return m ? { host: m[1]!.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1", port: Number(m[2]) } : undefined;
  }
  const n = display === undefined ? undefined : displayNumber(display);
  return n === undefined ? undefined : { host: "127.0.0.1", port: 5900 + n };
}

/**
 * The desktop page's VNC stream: its WebSocket's binary messages are the RFB protocol, relayed
 * to the VNC server on loopback. An observe viewer's input messages are dropped here (see
 * ObserveFilter), whatever its page does. A viewer lives as long as its link's token.
 */
export class VncRelay {
  private readonly viewers = new Map<WebSocket, Viewer>();

  constructor(
    private readonly address: { host: string; port: number } | undefined,
    tokens: TokenStore,
    private readonly log: Logger,
  ) {
    tokens.onRevoke((id) => {
      for (const [ws, viewer] of this.viewers) if (viewer.tokenId === id) ws.close(4001, `token ${id} has been revoked`);
    });
  }

  /** Why there is no desktop to view, or undefined. */
  unavailable(): string | undefined {
    return this.address ? undefined : "no VNC server is configured (the vnc setting, or a local display :N for 127.0.0.1:5900+N)";
  }

  attach(ws: WebSocket, viewer: Viewer): void {
    if (!this.address || this.viewers.size >= MAX_VIEWERS) {
      ws.close(1013, this.address ? `${MAX_VIEWERS} desktop viewers are open, the most the daemon relays` : this.unavailable());
      return;
    }
    this.viewers.set(ws, viewer);
    const filter = viewer.scope === "observe" ? new ObserveFilter() : undefined;
    const upstream = connect(this.address.port, this.address.host);
    const end = (why: string): void => {
      if (!this.viewers.delete(ws)) return;
      clearTimeout(expiry);
      upstream.destroy();
      if (ws.readyState === ws.OPEN) ws.close(1000, why.slice(0, 120));
      this.log.debug({ why, token: viewer.tokenId }, "desktop viewer closed");
    };
    const expiry =
      viewer.expiresAt === undefined
        ? undefined
        : setTimeout(() => end("the link has expired"), Math.min(2 ** 31 - 1, Math.max(0, viewer.expiresAt - Date.now())));
    expiry?.unref();
    upstream.on("error", (err) => end(`the VNC server ${this.address!.host}:${this.address!.port}: ${err.message}`));
    upstream.on("close", () => end("the VNC server closed the connection"));
    upstream.on("data", (data: Buffer) => {
      if (filter) {
        // The filter reads the server's greeting (and RFB 3.3's security type); viewer bytes it held for them go on now.
        let released: Buffer;
        try {
          released = filter.fromServer(data);
        } catch (err) {
          return end((err as Error).message);
        }
        if (released.length) upstream.write(released);
      }
      ws.send(data, { binary: true }, () => {
        if (upstream.isPaused() && ws.bufferedAmount < HIGH_WATER / 2) upstream.resume();
      });
      if (ws.bufferedAmount > HIGH_WATER) upstream.pause();
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return;
      let bytes = data;
      try {
        if (filter) bytes = filter.filter(data);
      } catch (err) {
        return end((err as Error).message);
      }
      if (bytes.length && !upstream.write(bytes)) {
        ws.pause();
        upstream.once("drain", () => ws.resume());
      }
    });
    ws.on("close", () => end("the viewer left"));
    ws.on("error", () => end("the viewer's socket failed"));
  }

  close(): void {
    for (const ws of this.viewers.keys()) ws.close(1001, "daemon shutting down");
  }
}

import { connect, type Socket } from "node:net";
import type { Logger } from "pino";
import { noteShortLivedBytes } from "../util/young-gc.js";
import { refuseUpgrade, waitingPage } from "./pages.js";

export interface TunnelContext {
  address(port: number): Promise<string | undefined> | string | undefined;
  forget(port: number): void;
  /** The open tunnels' client sockets (the WebSocket budget counts them). */
  tunnels: Set<Socket>;
  idleMs: number;
  log: Logger;
}

const countShortLived = (chunk: Buffer): void => noteShortLivedBytes(chunk.length);

/**
 * An upgrade (a WebSocket) as a byte tunnel to the app: the daemon only rewrote the request head;
 * the handshake and every frame after it are the app's. Either side closing, failing or staying
 * quiet for `idleMs` ends both.
 */
export function openTunnel(client: Socket, head: string, rest: Buffer, port: number, ctx: TunnelContext): void {
  client.pause(); // what the client sends next waits for the app's socket
  ctx.tunnels.add(client);
  client.once("close", () => ctx.tunnels.delete(client));
  const open = async (): Promise<void> => {
    const lookup = ctx.address(port);
    const address = typeof lookup === "object" ? await lookup : lookup;
    if (client.destroyed) return;
    if (address === undefined) return refuseUpgrade(client, waitingPage(port));
    const app = connect({ host: address, port, noDelay: true });
    const end = (): void => {
      client.destroy();
      app.destroy();
    };
    client.once("close", () => app.destroy());
    app.once("close", () => client.destroy());
    app.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNREFUSED" && !client.destroyed) {
        ctx.forget(port);
        return refuseUpgrade(client, waitingPage(port));
      }
      end();
    });
    client.on("error", end);
    for (const s of [client, app]) s.setTimeout(ctx.idleMs, end);
    app.cork();
    app.write(head, "latin1");
    if (rest.length) app.write(rest);
    app.uncork();
    app.on("data", countShortLived);
    client.on("data", countShortLived);
    app.pipe(client);
    client.pipe(app);
  };
  open().catch((err: unknown) => {
    ctx.log.error({ err, port }, "preview upgrade failed");
    client.destroy();
  });
}

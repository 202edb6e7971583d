import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of the daemon that can cut every connection it carries: `cut()` destroys
 * the daemon-facing sockets and the client-facing ones go down with them, so a client (or a
 * browser) sees its connection terminated from the server side.
 */
export class CuttingProxy {
  accepted = 0;
  private readonly pairs = new Set<{ upstream: Socket; downstream: Socket }>();
  private readonly drainWaiters: Array<() => void> = [];
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** The proxy's ws:// address, to connect a client through it. */
  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  static async start(target: string): Promise<CuttingProxy> {
    const { hostname, port } = new URL(target);
    const server = createServer();
    const proxy = await new Promise<CuttingProxy>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve(new CuttingProxy(server, (server.address() as { port: number }).port))),
    );
    server.on("connection", (downstream) => {
      proxy.accepted++;
      const upstream = createConnection({ host: hostname, port: Number(port) });
      const pair = { upstream, downstream };
      proxy.pairs.add(pair);
      upstream.pipe(downstream);
      downstream.pipe(upstream);
      const down = (): void => {
        proxy.pairs.delete(pair);
        upstream.destroy();
        downstream.destroy();
        if (proxy.pairs.size === 0) for (const resolve of proxy.drainWaiters.splice(0)) resolve();
      };
      upstream.on("close", down).on("error", down);
      downstream.on("close", down).on("error", down);
    });
    return proxy;
  }

  /** How many connections the proxy carries now. */
  get open(): number {
    return this.pairs.size;
  }

  /** Resolves once the proxy carries no connection (every one it accepted has closed). */
  drained(): Promise<void> {
    if (this.pairs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Terminates every connection from the daemon's side. */
  cut(): void {
    for (const { upstream } of this.pairs) upstream.destroy();
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

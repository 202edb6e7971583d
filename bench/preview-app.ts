import { createServer } from "node:http";

/** The app the preview bench proxies to, in a process of its own: `/small` (2 bytes) and `/big?size=N` (N bytes, streamed). */
const piece = Buffer.alloc(1024 * 1024, 97);
const server = createServer((req, res) => {
  if (req.url?.startsWith("/big")) {
    const size = Number(new URL(req.url, "http://x").searchParams.get("size"));
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": size });
    let sent = 0;
    const more = (): void => {
      while (sent < size) {
        const n = Math.min(piece.length, size - sent);
        sent += n;
        if (!res.write(n === piece.length ? piece : piece.subarray(0, n))) return void res.once("drain", more);
      }
      res.end();
    };
    return more();
  }
  res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": 2 });
  res.end("ok");
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));

import { connect, createServer } from "node:net";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
  createServer as createHttpServer,
} from "node:http";
import { Readable } from "node:stream";

/** A port nothing listens on right now (bound and released by the test). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The daemon's port, from its ws:// URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

export interface PreviewReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request to a preview host through the daemon (`<port>.localhost:<daemon port>`; the
 * connection goes to the daemon's loopback address, the Host header names the preview).
 */
export function previewRequest(
  daemonUrl: string,
  port: number,
  options: { path?: string; method?: string; headers?: Record<string, string>; body?: Readable | string } = {},
): Promise<PreviewReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: portOf(daemonUrl),
        method: options.method ?? "GET",
        path: options.path ?? "/",
        headers: { Host: `${port}.localhost:${portOf(daemonUrl)}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (options.body instanceof Readable) options.body.pipe(req);
    else req.end(options.body);
  });
}

/** The resident set of a process in bytes (/proc/<pid>/status VmRSS). */
export function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) * 1024;
}

/** `size` bytes of a fixed pseudo-random 1 MiB pattern, as a stream (no 200 MB buffer in the test either). */
export function patternStream(size: number, pattern: Buffer): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const piece = pattern.subarray(0, Math.min(pattern.length, size - sent));
      sent += piece.length;
      this.push(piece);
    },
  });
}

/** The SHA-256 of `size` bytes of the pattern, computed without holding them. */
export function patternHash(size: number, pattern: Buffer): string {
  const h = createHash("sha256");
  for (let sent = 0; sent < size; sent += pattern.length) h.update(pattern.subarray(0, Math.min(pattern.length, size - sent)));
  return h.digest("hex");
}

/** A tiny app on loopback that logs every request's URL and headers (the test checks the token never reaches it). */
export async function startApp(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = "127.0.0.1",
): Promise<{ server: Server; port: number; seen: Array<{ url: string; headers: IncomingHttpHeaders }> }> {
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  const server = createHttpServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    handler(req, res);
  });
  server.on("upgrade", (req) => seen.push({ url: req.url ?? "", headers: req.headers }));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as { port: number }).port, seen };
}

/** The CPU time a process has used, in clock ticks (utime + stime of /proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Resolves once a process has gone quiet: under 5 ticks (50 ms) of CPU in each of two half-seconds
 * in a row, or after `limitMs`. A flood's effect is measured once the daemon has done all it will
 * with it, however long a loaded machine makes that take.
 */
export async function untilQuiet(pid: number, limitMs = 120_000): Promise<void> {
  let last = cpuTicks(pid);
  let quiet = 0;
  for (const started = Date.now(); quiet < 2 && Date.now() - started < limitMs; ) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = cpuTicks(pid);
    quiet = now - last < 5 ? quiet + 1 : 0;
    last = now;
  }
}

/** Sends raw bytes to the daemon's port and resolves with everything read until the daemon closes (or `ms` pass). */
export function rawExchange(daemonPort: number, bytes: string | Buffer, ms = 5000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(daemonPort, "127.0.0.1");
    const chunks: Buffer[] = [];
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString("latin1"), closed });
    };
    const timer = setTimeout(() => done(false), ms);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("close", () => done(true));
    socket.on("error", reject);
    socket.write(bytes);
  });
}

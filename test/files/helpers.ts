import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, expect, onTestFinished } from "vitest";
import { ActionError } from "../../protocol/errors.js";
import type { ProgressUpdate, RunContext } from "../../daemon/runners/context.js";

/** A RunContext whose progress and output are recorded, with its controller for cancel tests. */
export function testContext(): RunContext & {
  controller: AbortController;
  updates: ProgressUpdate[];
  onProgress?: (u: ProgressUpdate) => void;
} {
  const controller = new AbortController();
  const updates: ProgressUpdate[] = [];
  const ctx = {
    controller,
    updates,
    signal: controller.signal,
    log: pino({ level: "silent" }),
    output: () => undefined,
    progress(u: ProgressUpdate) {
      updates.push(u);
      ctx.onProgress?.(u);
    },
    onProgress: undefined as ((u: ProgressUpdate) => void) | undefined,
  };
  return ctx;
}

/** A fresh temporary directory removed after the test. */
export async function tempDir(prefix = "hotline-files-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Names in `dir`, sorted (hidden files included) — used to prove nothing was left behind. */
export async function listDir(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1 (port 0) routing by exact path; closed after the test. */
export async function startServer(routes: Record<string, Route>): Promise<{ url: string; server: Server; hits: Record<string, number> }> {
  const hits: Record<string, number> = {};
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    const route = routes[path];
    if (route) route(req, res);
    else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hits };
}

/** Serves `body` with ETag and Range support, like a static file server. */
export function serveBytes(body: Buffer, etag = '"v1"', extraHeaders: Record<string, string> = {}): Route {
  return (req, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    const ifRange = req.headers["if-range"];
    if (range && (!ifRange || ifRange === etag)) {
      const start = Number(range[1]);
      res.writeHead(206, {
        "content-length": body.length - start,
        "content-range": `bytes ${start}-${body.length - 1}/${body.length}`,
        etag,
        "accept-ranges": "bytes",
        ...extraHeaders,
      });
      res.end(body.subarray(start));
      return;
    }
    res.writeHead(200, { "content-length": body.length, etag, "accept-ranges": "bytes", ...extraHeaders });
    res.end(body);
  };
}

/** Resolves when `ctx` reports progress satisfying `predicate`. */
export function progressReached(ctx: ReturnType<typeof testContext>, predicate: (u: ProgressUpdate) => boolean): Promise<ProgressUpdate> {
  return new Promise((resolve) => {
    ctx.onProgress = (u) => {
      if (predicate(u)) resolve(u);
    };
  });
}

/** For a describe block: a scratch directory removed after it, and a maker of fresh empty subdirectories. */
export function scratchDirs(prefix: string): { root: string; fresh(): string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  return {
    root,
    fresh() {
      const dir = join(root, `d${n++}`);
      mkdirSync(dir);
      return dir;
    },
  };
}

/** The ActionError `p` rejects with (fails the test when it resolves or throws something else). */
export async function rejection(p: Promise<unknown>): Promise<ActionError> {
  const err = await p.then(
    () => {
      throw new Error("expected the promise to reject");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ActionError);
  return err as ActionError;
}

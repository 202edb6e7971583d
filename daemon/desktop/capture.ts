import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { MAX_IMAGE_SIDE } from "../../protocol/actions/desktop.js";
import { ActionError } from "../../protocol/errors.js";
import type { EncodeReply, EncodeRequest } from "./encode-worker.js";
import type { Region } from "./image.js";
import { Turns } from "./turns.js";
import { runX } from "./x-command.js";

const WORKER_URL = new URL("./encode-worker.js", import.meta.url);
/** The largest dump xwd may write: a screen of MAX_IMAGE_SIDE² at 32 bits would be 256 MiB, so the area is bounded too. */
const MAX_DUMP_BYTES = 64 * 1024 * 1024;
/** Captures waiting for the one in progress at most; more are refused, so a client cannot queue without bound. */
const MAX_WAITING = 8;
const DEFAULT_JPEG_QUALITY = 80;

export interface CaptureRequest {
  region?: Region;
  maxWidth?: number;
  maxHeight?: number;
  format?: "png" | "jpeg";
  quality?: number;
}

export interface Capture {
  format: "png" | "jpeg";
  image: Buffer;
  width: number;
  height: number;
  screen: { width: number; height: number };
  region: Region;
}

/**
 * Screenshots: `xwd -root` dumps the screen (one short-lived X client, ~40 ms for 1600×900, faster
 * than ImageMagick's `import`, see bench/desktop.ts), and a worker thread crops, scales and encodes
 * it as PNG, so no pixel loop runs on the event loop. JPEG goes through ImageMagick's `convert`.
 * Captures run one at a time.
 */
export class Capturer {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: EncodeReply) => void; reject: (e: Error) => void }>();
  private readonly turns = new Turns(MAX_WAITING, "screenshots");

  capture(display: string, request: CaptureRequest): Promise<Capture> {
    return this.turns.run(() => this.captureNow(display, request));
  }

  /** Ends the encoder thread (daemon shutdown). */
  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private async captureNow(display: string, request: CaptureRequest): Promise<Capture> {
    const dump = await runX("xwd", ["-root", "-silent"], { display, maxOutputBytes: MAX_DUMP_BYTES, timeoutMs: 15_000 });
    const format = request.format ?? "png";
    const reply = await this.encode({
      id: this.nextId++,
      xwd: dump,
      ...(request.region ? { region: request.region } : {}),
      maxWidth: request.maxWidth ?? MAX_IMAGE_SIDE,
      maxHeight: request.maxHeight ?? MAX_IMAGE_SIDE,
      format: format === "png" ? "png" : "ppm",
    });
    if (!reply.ok)
      throw new ActionError(
        reply.invalidRegion ? "invalid_request" : "internal",
        reply.message,
        reply.invalidRegion ? { path: "/region" } : {},
      );
    let image = Buffer.from(reply.image.buffer, reply.image.byteOffset, reply.image.byteLength);
    if (format === "jpeg") {
      const quality = String(request.quality ?? DEFAULT_JPEG_QUALITY);
      image = await runX("convert", ["ppm:-", "-quality", quality, "jpeg:-"], { display, input: image, maxOutputBytes: MAX_DUMP_BYTES });
    }
    return { format, image, width: reply.width, height: reply.height, screen: reply.screen, region: reply.region };
  }

  private encode(request: EncodeRequest): Promise<EncodeReply> {
    const worker = this.startWorker();
    // The dump (5.8 MB for 1600×900) moves to the worker instead of being copied, when no other Buffer shares its memory.
    const { xwd } = request;
    const owned = xwd.byteOffset === 0 && xwd.byteLength === xwd.buffer.byteLength;
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      worker.postMessage(request, owned ? [xwd.buffer as ArrayBuffer] : []);
    });
  }

  private startWorker(): Worker {
    if (this.worker) return this.worker;
    if (!existsSync(fileURLToPath(WORKER_URL)))
      throw new ActionError("internal", `the screenshot encoder ${fileURLToPath(WORKER_URL)} is not built; run npm run build`);
    const worker = new Worker(WORKER_URL);
    worker.unref(); // an idle encoder never keeps the daemon alive
    worker.on("message", (reply: EncodeReply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      waiter?.resolve(reply);
    });
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.pending.values())
        waiter.reject(new ActionError("internal", `the screenshot encoder failed: ${err.message}`));
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`it exited (${code})`)));
    this.worker = worker;
    return worker;
  }
}

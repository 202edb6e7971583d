import WebSocket from "ws";
import type { WireError } from "../protocol/errors.js";

export class RequestFailed extends Error {
  constructor(readonly error: WireError) {
    super(`${error.code}: ${error.message}${error.path !== undefined ? ` (at ${error.path})` : ""}`);
  }
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** A small WebSocket client: request/reply matched by id, events to listeners. */
export class HotlineClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(event: Record<string, unknown>) => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        // A binary job.output frame (jobs.follow with binary: true): length-prefixed JSON header, then raw bytes.
        const headerLength = data.readUInt32BE(0);
        const event = JSON.parse(data.subarray(4, 4 + headerLength).toString()) as Record<string, unknown>;
        event.bytes = data.subarray(4 + headerLength);
        for (const l of this.listeners) l(event);
        return;
      }
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (typeof frame.event === "string") {
        for (const l of this.listeners) l(frame);
        return;
      }
      const p = this.pending.get(frame.id as number);
      if (!p) return;
      this.pending.delete(frame.id as number);
      if (frame.ok) p.resolve(frame.result);
      else p.reject(new RequestFailed(frame.error as WireError));
    });
    ws.on("close", () => {
      for (const p of this.pending.values()) p.reject(new Error("connection closed"));
      this.pending.clear();
    });
  }

  static connect(url: string, token: string, headers: Record<string, string> = {}): Promise<HotlineClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}`, ...headers }, perMessageDeflate: false });
      ws.once("open", () => resolve(new HotlineClient(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }

  request<T = Record<string, unknown>>(action: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ id, action, ...params }));
    });
  }

  onEvent(listener: (event: Record<string, unknown>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` once when the connection ends, whoever ended it (the daemon stopping or dying, or close()). */
  onClose(listener: (code: number, reason: string) => void): void {
    if (this.ws.readyState === WebSocket.CLOSED) listener(1006, "");
    else this.ws.once("close", (code: number, reason: Buffer) => listener(code, reason.toString()));
  }

  close(): void {
    this.ws.close();
  }
}

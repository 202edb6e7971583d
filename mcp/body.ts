import type { IncomingMessage } from "node:http";

export type BodyRead = { ok: true; text: string } | { ok: false; reason: "too_large" | "aborted" };

/**
 * Reads a request body of at most `limit` bytes. Stops reading at the limit (a Content-Length over
 * it is refused before a byte is read), and settles when the client goes: the HTTP server's
 * request timeout and the daemon's budget of unproven requests end a body that never finishes.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, reason: "too_large" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: BodyRead): void => {
      req.off("data", onData).off("end", onEnd).off("close", onGone).off("error", onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        return settle({ ok: false, reason: "too_large" });
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle({ ok: true, text: Buffer.concat(chunks).toString("utf8") });
    const onGone = (): void => settle({ ok: false, reason: "aborted" });
    req.on("data", onData).on("end", onEnd).on("close", onGone).on("error", onGone);
  });
}

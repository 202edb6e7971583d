import { parentPort } from "node:worker_threads";
import { cropAndScale, encodePng, encodePpm, PNG_LAYOUT, parseXwd, ppmLayout, type Region } from "./image.js";

/** One capture to encode: the dump xwd wrote, the part of it wanted and the image size. */
export interface EncodeRequest {
  id: number;
  xwd: Uint8Array;
  region?: Region;
  maxWidth: number;
  maxHeight: number;
  format: "png" | "ppm";
}

export type EncodeReply =
  | { id: number; ok: true; image: Uint8Array; width: number; height: number; screen: { width: number; height: number }; region: Region }
  | { id: number; ok: false; message: string; invalidRegion?: boolean };

/** Decodes, crops, scales and encodes off the event loop: a 1600×900 capture is tens of ms of pixel work. */
function encode(request: EncodeRequest): EncodeReply {
  const dump = parseXwd(Buffer.from(request.xwd.buffer, request.xwd.byteOffset, request.xwd.byteLength));
  const region = request.region ?? { x: 0, y: 0, width: dump.width, height: dump.height };
  if (region.x + region.width > dump.width || region.y + region.height > dump.height)
    return {
      id: request.id,
      ok: false,
      invalidRegion: true,
      message: `region ${region.width}x${region.height}+${region.x}+${region.y} is not inside the ${dump.width}x${dump.height} screen`,
    };
  const scale = Math.min(1, request.maxWidth / region.width, request.maxHeight / region.height);
  const width = Math.max(1, Math.round(region.width * scale));
  const height = Math.max(1, Math.round(region.height * scale));
  const png = request.format === "png";
  const pixels = cropAndScale(dump, region, width, height, png ? PNG_LAYOUT : ppmLayout(width, height));
  const image = png ? encodePng(pixels) : encodePpm(pixels);
  return { id: request.id, ok: true, image, width, height, screen: { width: dump.width, height: dump.height }, region };
}

parentPort!.on("message", (request: EncodeRequest) => {
  let reply: EncodeReply;
  try {
    reply = encode(request);
  } catch (err) {
    reply = { id: request.id, ok: false, message: (err as Error).message };
  }
  // An image that owns its whole memory moves to the main thread; a small Buffer may be a view of Node's shared pool, so it is copied.
  const image = reply.ok ? reply.image : undefined;
  const owned = image !== undefined && image.byteOffset === 0 && image.byteLength === image.buffer.byteLength;
  parentPort!.postMessage(reply, owned ? [image.buffer as ArrayBuffer] : []);
});

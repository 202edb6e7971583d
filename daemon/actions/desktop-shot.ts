import type { CaptureRequest } from "../desktop/capture.js";
import type { Region } from "../desktop/image.js";

/** The capture options of desktop.screenshot and of desktop.act's `screenshot`, without undefined fields. */
export function screenshotRequest(
  params: { maxWidth?: number; maxHeight?: number; format?: "png" | "jpeg"; quality?: number },
  region?: Region,
): CaptureRequest {
  const request: CaptureRequest = {};
  if (params.maxWidth !== undefined) request.maxWidth = params.maxWidth;
  if (params.maxHeight !== undefined) request.maxHeight = params.maxHeight;
  if (params.format !== undefined) request.format = params.format;
  if (params.quality !== undefined) request.quality = params.quality;
  if (region) request.region = region;
  return request;
}

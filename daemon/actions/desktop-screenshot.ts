import { desktopScreenshot, type DesktopImageHeader } from "../../protocol/actions/desktop.js";
import { screenshotRequest } from "./desktop-shot.js";
import { entry } from "./context.js";

/** The screenshot's pixels define the coordinate space of this connection's next desktop.act steps. */
export default entry(desktopScreenshot, async (params, { services, connection, afterReply }) => {
  // A client that does not read its socket gets no more images queued for it until it does (told first when there is no desktop).
  if (!connection.sink.writable) {
    await services.desktop.screen();
    await new Promise<void>((resolve) => connection.sink.onDrain(resolve));
  }
  const { reply, image } = await services.desktop.screenshotOfDisplay(screenshotRequest(params, params.region));
  connection.desktopView = { region: reply.region, width: reply.width, height: reply.height };
  if (!params.binary) return { ...reply, data: image.toString("base64") };
  const header = Buffer.from(
    JSON.stringify({ event: "desktop.image", format: reply.format, bytes: image.length } satisfies DesktopImageHeader),
  );
  const frame = Buffer.allocUnsafe(4 + header.length + image.length);
  frame.writeUInt32BE(header.length, 0);
  header.copy(frame, 4);
  image.copy(frame, 4 + header.length);
  afterReply(() => connection.sink.sendBinary(frame));
  return { ...reply, data: "" };
});

import { desktopAct, type Screenshot } from "../../protocol/actions/desktop.js";
import { fromScreen, screenView, toScreen } from "../desktop/coordinates.js";
import type { Step } from "../desktop/input.js";
import { screenshotRequest } from "./desktop-shot.js";
import { entry } from "./context.js";

/** Coordinates are in the last screenshot's space (or scaledTo's), mapped to the screen here. */
export default entry(desktopAct, async (params, { services, connection }) => {
  const screen = await services.desktop.screen();
  const view = params.scaledTo
    ? { ...screenView(screen), width: params.scaledTo.width, height: params.scaledTo.height }
    : (connection.desktopView ?? screenView(screen));
  const step: Step = { do: params.do };
  if (params.coordinate) step.at = toScreen(params.coordinate, view, screen, "/coordinate");
  if (params.startCoordinate) step.from = toScreen(params.startCoordinate, view, screen, "/startCoordinate");
  if (params.text !== undefined) step.text = params.text;
  if (params.scrollDirection) step.scrollDirection = params.scrollDirection;
  if (params.scrollAmount !== undefined) step.scrollAmount = params.scrollAmount;
  if (params.duration !== undefined) step.duration = params.duration;
  const pointer = await services.desktop.act(screen, step);
  const result: { done: string; coordinate?: [number, number]; screenshot?: Screenshot } = { done: params.do };
  if (pointer) result.coordinate = fromScreen(pointer, view);
  if (params.screenshot) {
    const { reply, image } = await services.desktop.screenshot(screen.display, screenshotRequest(params.screenshot));
    connection.desktopView = { region: reply.region, width: reply.width, height: reply.height };
    result.screenshot = { ...reply, data: image.toString("base64") };
  }
  return result;
});

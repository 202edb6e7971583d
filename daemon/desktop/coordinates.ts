import { ActionError } from "../../protocol/errors.js";
import type { Region } from "./image.js";

/** The space a client's coordinates are in: an image of `width` × `height` showing `region` of the screen. */
export interface View {
  region: Region;
  width: number;
  height: number;
}

/** The screen itself (no screenshot taken, nothing scaled). */
export function screenView(screen: { width: number; height: number }): View {
  return { region: { x: 0, y: 0, width: screen.width, height: screen.height }, width: screen.width, height: screen.height };
}

/** A point of the view on the screen, refused when it falls outside the screen. */
export function toScreen(
  point: readonly [number, number],
  view: View,
  screen: { width: number; height: number },
  path: string,
): { x: number; y: number } {
  const { region } = view;
  const x = region.x + Math.floor(((point[0] + 0.5) * region.width) / view.width);
  const y = region.y + Math.floor(((point[1] + 0.5) * region.height) / view.height);
  if (point[0] >= view.width || point[1] >= view.height || x >= screen.width || y >= screen.height)
    throw new ActionError(
      "invalid_request",
      `[${point[0]}, ${point[1]}] is outside the ${view.width}x${view.height} image the coordinates are in (the last screenshot's, or scaledTo)`,
      { path },
    );
  return { x, y };
}

/** A screen point in the view's space (cursor_position), clamped to it. */
export function fromScreen(point: { x: number; y: number }, view: View): [number, number] {
  const { region } = view;
  const x = Math.floor(((point.x - region.x) * view.width) / region.width);
  const y = Math.floor(((point.y - region.y) * view.height) / region.height);
  return [Math.min(Math.max(x, 0), view.width - 1), Math.min(Math.max(y, 0), view.height - 1)];
}

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { HotlineClient } from "../client/index.js";
import { DESKTOP_STEPS } from "../protocol/actions/desktop.js";

/** The MCP tool of the computer-use action set. */
export const COMPUTER_TOOL = "computer";
/** Screenshots for a model fit this (WXGA: what computer-use models are trained to read). */
const SHOT = { maxWidth: 1280, maxHeight: 800 } as const;
const Point = { type: "array", items: { type: "integer", minimum: 0 }, minItems: 2, maxItems: 2 };

/** Anthropic's computer-use tool input, exactly (snake_case), so an agent built for it drives the sandbox unchanged. */
export const COMPUTER_INPUT_SCHEMA = {
  type: "object" as const,
  properties: {
    action: { type: "string", enum: ["screenshot", ...DESKTOP_STEPS] },
    coordinate: { ...Point, description: "(x, y) in the last screenshot's pixels" },
    start_coordinate: { ...Point, description: "left_click_drag: where the drag starts" },
    text: { type: "string", description: "type: the text; key, hold_key: xdotool key names (ctrl+s, Return); scroll: keys held" },
    scroll_direction: { type: "string", enum: ["up", "down", "left", "right"] },
    scroll_amount: { type: "integer", minimum: 1, maximum: 100 },
    duration: { type: "number", minimum: 0, maximum: 100, description: "hold_key, wait: seconds" },
  },
  required: ["action"],
  additionalProperties: false,
};

export const COMPUTER_DESCRIPTION =
  `The desktop, as Anthropic's computer-use tool: screenshot (fits ${SHOT.maxWidth}x${SHOT.maxHeight}), then clicks, drags, scroll, key, type … ` +
  "with coordinates in that screenshot's pixels. Every step but wait and cursor_position returns a screenshot taken after it.";

type ComputerInput = {
  action: string;
  coordinate?: [number, number];
  start_coordinate?: [number, number];
  text?: string;
  scroll_direction?: "up" | "down" | "left" | "right";
  scroll_amount?: number;
  duration?: number;
};

type Shot = {
  format: "png" | "jpeg";
  width: number;
  height: number;
  scale: number;
  screen: { width: number; height: number };
  data: string;
};

function image(shot: Shot): CallToolResult["content"][number] {
  return { type: "image", data: shot.data, mimeType: shot.format === "png" ? "image/png" : "image/jpeg" };
}

/**
 * One session's computer tool: it remembers the size of the screenshot it last returned and
 * passes it as desktop.act's scaledTo, so the model's coordinates map back to the screen
 * whichever connection the call travels on.
 */
export function computerTool(client: HotlineClient): (input: ComputerInput) => Promise<CallToolResult> {
  let seen: { width: number; height: number } | undefined;
  const remember = (shot: Shot): Shot => {
    seen = { width: shot.width, height: shot.height };
    return shot;
  };
  return async (input) => {
    if (input.action === "screenshot") {
      const shot = remember((await client.request("desktop.screenshot", SHOT)) as Shot);
      return {
        content: [
          {
            type: "text",
            text: `screenshot ${shot.width}x${shot.height} of the ${shot.screen.width}x${shot.screen.height} screen (scale ${shot.scale})`,
          },
          image(shot),
        ],
      };
    }
    const params: Record<string, unknown> = { do: input.action };
    if (input.coordinate) params.coordinate = input.coordinate;
    if (input.start_coordinate) params.startCoordinate = input.start_coordinate;
    if (input.text !== undefined) params.text = input.text;
    if (input.scroll_direction) params.scrollDirection = input.scroll_direction;
    if (input.scroll_amount !== undefined) params.scrollAmount = input.scroll_amount;
    if (input.duration !== undefined) params.duration = input.duration;
    if (seen) params.scaledTo = seen;
    const withShot = input.action !== "wait" && input.action !== "cursor_position";
    if (withShot) params.screenshot = SHOT;
    const reply = (await client.request("desktop.act", params as never)) as {
      done: string;
      coordinate?: [number, number];
      screenshot?: Shot;
    };
    const text = reply.coordinate ? `X=${reply.coordinate[0]},Y=${reply.coordinate[1]}` : `${reply.done}: done`;
    const content: CallToolResult["content"] = [{ type: "text", text }];
    if (reply.screenshot) content.push(image(remember(reply.screenshot)));
    return { content };
  };
}

import { Type, type Static } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { LinkScope, MAX_LINK_TTL_MS } from "./browser.js";

/** The largest side of a screenshot, and of a screen the daemon captures at all. */
export const MAX_IMAGE_SIDE = 8192;
/** The longest text one `type` step takes (a longer text is several steps). */
export const MAX_TYPE_CHARS = 4096;

const Side = Type.Integer({ minimum: 16, maximum: MAX_IMAGE_SIDE });
const Point = Type.Tuple([Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 })]);
const Size = Type.Object({ width: Side, height: Side }, { additionalProperties: false });

export const ImageFormat = Type.Union([Type.Literal("png"), Type.Literal("jpeg")]);

const ShotParams = {
  maxWidth: Type.Optional(Type.Integer({ minimum: 16, maximum: MAX_IMAGE_SIDE, description: "scale down to fit this width" })),
  maxHeight: Type.Optional(Type.Integer({ minimum: 16, maximum: MAX_IMAGE_SIDE, description: "scale down to fit this height" })),
  format: Type.Optional(ImageFormat),
  quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "JPEG quality (default 80)" })),
};

/** What a screenshot is: the image and how its pixels map to the screen's. */
export const Screenshot = Type.Object({
  format: ImageFormat,
  width: Type.Integer({ description: "the image's size in pixels" }),
  height: Type.Integer(),
  scale: Type.Number({ description: "image pixels per screen pixel (1: not scaled)" }),
  screen: Type.Object({ width: Type.Integer(), height: Type.Integer() }),
  region: Type.Object({ x: Type.Integer(), y: Type.Integer(), width: Type.Integer(), height: Type.Integer() }),
  bytes: Type.Integer({ description: "the encoded image's length" }),
  data: Type.String({ description: 'the image as base64; "" with binary: true (the bytes follow in a binary frame)' }),
});
export type Screenshot = Static<typeof Screenshot>;

/** The header of the binary frame that carries a screenshot's bytes (desktop.screenshot {binary: true}). */
export const DesktopImageHeader = Type.Object({ event: Type.Literal("desktop.image"), format: ImageFormat, bytes: Type.Integer() });
export type DesktopImageHeader = Static<typeof DesktopImageHeader>;

export const desktopScreenshot = defineAction({
  name: "desktop.screenshot",
  scope: "manage",
  summary:
    "A screenshot of the desktop (PNG or JPEG), scaled down to fit maxWidth × maxHeight; later desktop.act coordinates are in its space.",
  params: Type.Object(
    {
      ...ShotParams,
      region: Type.Optional(
        Type.Object(
          { x: Type.Integer({ minimum: 0 }), y: Type.Integer({ minimum: 0 }), width: Side, height: Side },
          { additionalProperties: false, description: "a part of the screen, in screen pixels" },
        ),
      ),
      binary: Type.Optional(Type.Boolean({ description: "send the image raw in a binary frame right after the reply" })),
    },
    { additionalProperties: false },
  ),
  result: Screenshot,
});

/** The steps of desktop.act: Anthropic's computer-use action names. */
export const DESKTOP_STEPS = [
  "mouse_move",
  "left_click",
  "right_click",
  "middle_click",
  "double_click",
  "triple_click",
  "left_click_drag",
  "left_mouse_down",
  "left_mouse_up",
  "scroll",
  "key",
  "hold_key",
  "type",
  "cursor_position",
  "wait",
] as const;
export type DesktopStep = (typeof DESKTOP_STEPS)[number];

export const desktopAct = defineAction({
  name: "desktop.act",
  scope: "manage",
  summary:
    "One input step on the desktop (computer-use actions: clicks, drag, scroll, key, type …), coordinates in the last screenshot's space.",
  params: Type.Object(
    {
      do: Type.Union(
        DESKTOP_STEPS.map((s) => Type.Literal(s)),
        { description: "the step" },
      ),
      coordinate: Type.Optional(Point),
      startCoordinate: Type.Optional(Point),
      text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TYPE_CHARS, description: "type: the text; key, hold_key: keys" })),
      scrollDirection: Type.Optional(Type.Union([Type.Literal("up"), Type.Literal("down"), Type.Literal("left"), Type.Literal("right")])),
      scrollAmount: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      duration: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: "hold_key, wait: seconds" })),
      scaledTo: Type.Optional(Size),
      screenshot: Type.Optional(
        Type.Object(ShotParams, { additionalProperties: false, description: "a screenshot after the step, in the reply" }),
      ),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    done: Type.String(),
    coordinate: Type.Optional(Point),
    screenshot: Type.Optional(Screenshot),
  }),
});

const LinkTtl = Type.Optional(Type.Integer({ minimum: 10_000, maximum: MAX_LINK_TTL_MS }));
const Unavailable = Type.Object({ available: Type.Literal(false), reason: Type.String() });

export const desktopOpen = defineAction({
  name: "desktop.open",
  scope: "observe",
  summary:
    "A short-lived browser link to the desktop (noVNC through the daemon), with the asking token's scope or, with scope, a lower one: an observe link only views.",
  params: Type.Object({ ttlMs: LinkTtl, scope: LinkScope }, { additionalProperties: false }),
  result: Type.Union([
    Type.Object({
      available: Type.Literal(true),
      desktopUrl: Type.String(),
      expiresAt: Type.String(),
      tokenId: Type.String(),
      scope: Type.Union([Type.Literal("manage"), Type.Literal("observe")]),
    }),
    Unavailable,
  ]),
});

export const browserOpen = defineAction({
  name: "browser.open",
  scope: "manage",
  summary:
    "Start Chromium on the desktop (once) and get a CDP WebSocket URL through the daemon for Playwright's connectOverCDP; url opens a tab.",
  params: Type.Object(
    {
      url: Type.Optional(Type.String({ minLength: 1, maxLength: 8192, pattern: "^(https?|file|about|data):" })),
      ttlMs: LinkTtl,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    cdpUrl: Type.String(),
    expiresAt: Type.String(),
    tokenId: Type.String(),
    pid: Type.Integer(),
    pages: Type.Array(Type.Object({ url: Type.String(), title: Type.String() })),
  }),
});

/** state.info's `desktop`: the display, or why there is none. */
export const DesktopInfo = Type.Union([
  Type.Object({ available: Type.Literal(true), display: Type.String(), width: Type.Integer(), height: Type.Integer() }),
  Type.Object({ available: Type.Literal(false), display: Type.Optional(Type.String()), reason: Type.String() }),
]);
export type DesktopInfo = Static<typeof DesktopInfo>;

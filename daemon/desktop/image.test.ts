import { execFileSync } from "node:child_process";
import { inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { desktopToolsAvailable } from "../../test/helpers/x-server.js";
import { cropAndScale, encodePng, encodePpm, PNG_LAYOUT, parseXwd, ppmLayout } from "./image.js";

/** An XWD dump (version 7, ZPixmap, TrueColor, 32-bit little-endian BGRX) of `rgb(x, y)`. */
function xwd(width: number, height: number, rgb: (x: number, y: number) => [number, number, number]): Buffer {
  const header = Buffer.alloc(100);
  const fields = [
    100,
    7,
    2,
    24,
    width,
    height,
    0,
    0,
    32,
    0,
    32,
    32,
    width * 4,
    4,
    0xff0000,
    0xff00,
    0xff,
    8,
    256,
    0,
    width,
    height,
    0,
    0,
    0,
  ];
  fields.forEach((v, i) => header.writeUInt32BE(v, i * 4));
  const pixels = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [r, g, b] = rgb(x, y);
      pixels.set([b, g, r, 0], (y * width + x) * 4);
    }
  return Buffer.concat([header, pixels]);
}

/** The filter-type byte of every row, read from the PNG's (single) IDAT chunk. */
function rowFilters(png: Buffer, width: number, height: number): Set<number> {
  const at = png.indexOf("IDAT");
  const raw = inflateSync(png.subarray(at + 4, at + 4 + png.readUInt32BE(at - 4)));
  return new Set(Array.from({ length: height }, (_, y) => raw[y * (width * 3 + 1)]!));
}

/** Pixels as ImageMagick decodes them (not the daemon's code). */
const decoded = (image: Buffer): Buffer => execFileSync("convert", ["-", "-depth", "8", "rgb:-"], { input: image });

function expected(width: number, height: number, rgb: (x: number, y: number) => [number, number, number]): Buffer {
  return Buffer.from(Array.from({ length: width * height }, (_, i) => rgb(i % width, Math.floor(i / width))).flat());
}

describe.skipIf(!desktopToolsAvailable())("screenshot encoding", () => {
  const W = 64;
  const H = 48;
  // A page of coloured text: white, with sharp one-pixel details; and a photo's content: a smooth gradient.
  const screen = (x: number, y: number): [number, number, number] =>
    x % 7 === 3 && y % 5 === 1 ? [200, 10, 30] : x % 11 === 5 && y % 3 === 0 ? [20, 90, 160] : [255, 255, 255];
  const gradient = (x: number, y: number): [number, number, number] => [x * 4, y * 5, (x * 3 + y * 2) & 0xff];

  it("keeps filter None for text on white and takes Sub for a gradient; both decode to the exact pixels", () => {
    for (const [content, filter] of [
      [screen, 0],
      [gradient, 1],
    ] as const) {
      const dump = parseXwd(xwd(W, H, content));
      const png = encodePng(cropAndScale(dump, { x: 0, y: 0, width: W, height: H }, W, H, PNG_LAYOUT));
      expect(rowFilters(png, W, H)).toEqual(new Set([filter]));
      expect(decoded(png).equals(expected(W, H, content))).toBe(true);
    }
  });

  it("a region and a half-size image average the right pixels, as PNG and as PPM", () => {
    const dump = parseXwd(xwd(W, H, gradient));
    const region = { x: 10, y: 6, width: 20, height: 10 };
    const part = (x: number, y: number) => gradient(x + 10, y + 6);
    expect(decoded(encodePng(cropAndScale(dump, region, 20, 10, PNG_LAYOUT))).equals(expected(20, 10, part))).toBe(true);
    expect(decoded(encodePpm(cropAndScale(dump, region, 20, 10, ppmLayout(20, 10)))).equals(expected(20, 10, part))).toBe(true);
    // 2:1 each way: each output pixel is the mean of a 2×2 box (the gradient's boxes average exactly to .5 → rounded).
    const half = (x: number, y: number): [number, number, number] => {
      const box = [gradient(2 * x, 2 * y), gradient(2 * x + 1, 2 * y), gradient(2 * x, 2 * y + 1), gradient(2 * x + 1, 2 * y + 1)];
      return [0, 1, 2].map((c) => Math.round(box.reduce((s, p) => s + p[c]!, 0) / 4)) as [number, number, number];
    };
    const png = encodePng(cropAndScale(dump, { x: 0, y: 0, width: W, height: H }, W / 2, H / 2, PNG_LAYOUT));
    expect(decoded(png).equals(expected(W / 2, H / 2, half))).toBe(true);
  });
});

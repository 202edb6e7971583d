import { crc32, deflateSync } from "node:zlib";

/** A rectangle of the screen, in screen pixels. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Packed 8-bit RGB pixels, row after row. */
export interface RgbImage {
  width: number;
  height: number;
  rgb: Buffer;
}

/** An X window dump (`xwd -root`): its pixels where they are in `data`, and how to read one. */
interface XwdImage {
  width: number;
  height: number;
  bytesPerLine: number;
  bitsPerPixel: number;
  msbFirst: boolean;
  masks: [number, number, number];
  offset: number;
  data: Buffer;
}

/** Reads the header of an XWD file (X11/XWDFile.h: 25 CARD32 fields, then the name and colour map). */
export function parseXwd(data: Buffer): XwdImage {
  if (data.length < 100) throw new Error(`xwd wrote ${data.length} bytes, not a window dump`);
  const field = (i: number): number => data.readUInt32BE(i * 4);
  const [headerSize, version, format, , width, height] = [field(0), field(1), field(2), field(3), field(4), field(5)];
  const bitsPerPixel = field(11);
  const visualClass = field(13);
  if (version !== 7 || format !== 2) throw new Error(`xwd wrote a dump of version ${version}, format ${format}; expected 7, ZPixmap`);
  if (visualClass !== 4 && visualClass !== 5) throw new Error(`the display's visual class is ${visualClass}; only TrueColor is captured`);
  if (bitsPerPixel !== 32 && bitsPerPixel !== 24 && bitsPerPixel !== 16)
    throw new Error(`the display has ${bitsPerPixel} bits per pixel; 16, 24 or 32 are captured`);
  const bytesPerLine = field(12);
  const offset = headerSize + field(19) * 12; // ncolors XWDColor entries of 12 bytes
  if (offset + bytesPerLine * height > data.length) throw new Error("xwd's dump is shorter than its header says");
  return { width, height, bytesPerLine, bitsPerPixel, msbFirst: field(7) === 1, masks: [field(14), field(15), field(16)], offset, data };
}

function shiftOf(mask: number): { shift: number; max: number } {
  let shift = 0;
  while (shift < 32 && ((mask >>> shift) & 1) === 0) shift++;
  return { shift, max: mask >>> shift };
}

/**
 * The region of a dump as RGB, scaled by averaging each output pixel's source box (area
 * resampling: text stays legible when scaled down, unlike nearest-neighbour).
 */
export function cropAndScale(xwd: XwdImage, region: Region, width: number, height: number): RgbImage {
  const { data, bytesPerLine, offset, bitsPerPixel, msbFirst } = xwd;
  const bpp = bitsPerPixel / 8;
  const [r, g, b] = xwd.masks.map(shiftOf) as [ReturnType<typeof shiftOf>, ReturnType<typeof shiftOf>, ReturnType<typeof shiftOf>];
  const fast = bpp === 4 && !msbFirst && r.shift === 16 && g.shift === 8 && b.shift === 0 && r.max === 255;
  const pixel = (x: number, y: number): number => {
    const at = offset + y * bytesPerLine + x * bpp;
    if (bpp === 4) return msbFirst ? data.readUInt32BE(at) : data.readUInt32LE(at);
    if (bpp === 2) return msbFirst ? data.readUInt16BE(at) : data.readUInt16LE(at);
    return msbFirst ? data.readUIntBE(at, 3) : data.readUIntLE(at, 3);
  };
  const channel = (p: number, c: { shift: number; max: number }): number => Math.round((((p >>> c.shift) & c.max) * 255) / c.max);
  const rgb = Buffer.allocUnsafe(width * height * 3);
  const xs = boxes(region.x, region.width, width);
  const ys = boxes(region.y, region.height, height);
  let o = 0;
  for (let oy = 0; oy < height; oy++) {
    const y0 = ys[oy * 2]!;
    const y1 = ys[oy * 2 + 1]!;
    for (let ox = 0; ox < width; ox++) {
      const x0 = xs[ox * 2]!;
      const x1 = xs[ox * 2 + 1]!;
      let sr = 0;
      let sg = 0;
      let sb = 0;
      for (let y = y0; y < y1; y++) {
        const row = offset + y * bytesPerLine;
        for (let x = x0; x < x1; x++) {
          if (fast) {
            const at = row + x * 4;
            sb += data[at]!;
            sg += data[at + 1]!;
            sr += data[at + 2]!;
          } else {
            const p = pixel(x, y);
            sr += channel(p, r);
            sg += channel(p, g);
            sb += channel(p, b);
          }
        }
      }
      const n = (x1 - x0) * (y1 - y0);
      rgb[o++] = n === 1 ? sr : Math.round(sr / n);
      rgb[o++] = n === 1 ? sg : Math.round(sg / n);
      rgb[o++] = n === 1 ? sb : Math.round(sb / n);
    }
  }
  return { width, height, rgb };
}

/** For each of `out` pixels, the [start, end) source pixels it averages, in one flat array. */
function boxes(start: number, length: number, out: number): Int32Array {
  const edges = new Int32Array(out * 2);
  for (let i = 0; i < out; i++) {
    const a = start + Math.floor((i * length) / out);
    const e = start + Math.floor(((i + 1) * length) / out);
    edges[i * 2] = a;
    edges[i * 2 + 1] = Math.max(e, a + 1);
  }
  return edges;
}

function chunk(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body, crc32(head.subarray(4))) >>> 0, 0);
  return Buffer.concat([head, body, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** zlib's level for screenshots: level 1–3 is as small within a few percent on screen content, at a fraction of 6's time. */
const PNG_DEFLATE_LEVEL = 3;

/**
 * A PNG of an RGB image. Every row uses the Sub filter (the difference to the left pixel), which
 * turns a screen's flat areas and text runs into zeros that deflate packs well; choosing a filter
 * per row would cost several passes for a few percent.
 */
export function encodePng(image: RgbImage): Buffer {
  const { width, height, rgb } = image;
  const stride = width * 3;
  const raw = Buffer.allocUnsafe((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const src = y * stride;
    const dst = y * (stride + 1);
    raw[dst] = 1; // Sub
    for (let i = 0; i < 3; i++) raw[dst + 1 + i] = rgb[src + i]!;
    for (let i = 3; i < stride; i++) raw[dst + 1 + i] = (rgb[src + i]! - rgb[src + i - 3]!) & 0xff;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour RGB
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw, { level: PNG_DEFLATE_LEVEL })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A binary PPM (P6) of an RGB image: what ImageMagick reads to write a JPEG. */
export function encodePpm(image: RgbImage): Buffer {
  return Buffer.concat([Buffer.from(`P6\n${image.width} ${image.height}\n255\n`, "latin1"), image.rgb]);
}

import { crc32, deflateSync } from "node:zlib";

/** A rectangle of the screen, in screen pixels. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * 8-bit RGB pixels laid out as an encoder wants them: from `start`, rows of `width * 3` bytes, each
 * after `rowPrefix` zero bytes (PNG's filter-type byte: 0 is None). The bytes before `start` are the
 * encoder's to fill (a PPM header).
 */
export interface RgbImage {
  width: number;
  height: number;
  data: Buffer;
  start: number;
  rowPrefix: number;
}

/** Where the pixels go in the output buffer: bytes before them, and before each row. */
export interface RgbLayout {
  start: number;
  rowPrefix: number;
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
 * The region of a dump as RGB laid out for its encoder, scaled by averaging each output pixel's
 * source box (area resampling: text stays legible when scaled down, unlike nearest-neighbour).
 */
export function cropAndScale(xwd: XwdImage, region: Region, width: number, height: number, layout: RgbLayout): RgbImage {
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
  const { start, rowPrefix } = layout;
  const rgb = Buffer.allocUnsafe(start + (rowPrefix + width * 3) * height);
  rgb.fill(0, 0, start);
  const image = { width, height, data: rgb, start, rowPrefix };
  if (fast && width === region.width && height === region.height) return copyBgrx(xwd, region, image);
  const xs = boxes(region.x, region.width, width);
  const ys = boxes(region.y, region.height, height);
  let o = start;
  for (let oy = 0; oy < height; oy++) {
    for (let i = 0; i < rowPrefix; i++) rgb[o++] = 0;
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
  return image;
}

/** The unscaled region of a little-endian 32-bit BGRX dump (what X servers on x86 and ARM have): one pass, a word a pixel. */
function copyBgrx(xwd: XwdImage, region: Region, image: RgbImage): RgbImage {
  const { data, bytesPerLine, offset } = xwd;
  const { width, height, data: out, rowPrefix } = image;
  let o = image.start;
  for (let y = 0; y < height; y++) {
    for (let i = 0; i < rowPrefix; i++) out[o++] = 0;
    let at = offset + (region.y + y) * bytesPerLine + region.x * 4;
    for (let x = 0; x < width; x++, at += 4) {
      out[o++] = data[at + 2]!;
      out[o++] = data[at + 1]!;
      out[o++] = data[at]!;
    }
  }
  return image;
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
/**
 * zlib's level for screenshots: on a 1600×900 screen of coloured text (bench/desktop.ts), level 1
 * takes ~30 % less time than 3 for ~4 % more bytes; 6 takes twice as long as 3 for ~2 % fewer.
 */
const PNG_DEFLATE_LEVEL = 1;
/** Where the pixels go for encodePng: every row after its filter-type byte (encodePng may filter the rows in place). */
export const PNG_LAYOUT: RgbLayout = { start: 0, rowPrefix: 1 };

/** Every how many rows encodePng samples to choose the filter. */
const FILTER_SAMPLE_ROWS = 16;

/**
 * Whether the image deflates better with PNG's Sub filter (each byte minus the one a pixel to its
 * left) than with None, by the usual heuristic (the smaller sum of the filtered bytes read as
 * signed) on every 16th row: text on a light background keeps None, whose repeats deflate finds
 * as they are (−14 % bytes and faster than Sub on the bench's coloured text), while photos,
 * gradients and dark flat areas take Sub (−31 % on a plasma fractal).
 */
function prefersSub(data: Buffer, stride: number, height: number): boolean {
  let none = 0;
  let sub = 0;
  for (let y = 0; y < height; y += FILTER_SAMPLE_ROWS) {
    const row = y * (stride + 1) + 1;
    for (let i = 0; i < stride; i++) {
      const v = data[row + i]!;
      const d = i < 3 ? v : (v - data[row + i - 3]!) & 0xff;
      none += v < 128 ? v : 256 - v;
      sub += d < 128 ? d : 256 - d;
    }
  }
  return sub < none;
}

/** Applies the Sub filter to every row in place, right to left so each byte's left neighbour is still unfiltered. */
function filterSub(data: Buffer, stride: number, height: number): void {
  for (let y = 0; y < height; y++) {
    const row = y * (stride + 1);
    data[row] = 1;
    for (let i = row + stride; i > row + 3; i--) data[i] = (data[i]! - data[i - 3]!) & 0xff;
  }
}

/** A PNG of an image laid out as PNG_LAYOUT (its rows' filter bytes 0, None), with one filter for all rows (see prefersSub). */
export function encodePng(image: RgbImage): Buffer {
  const { width, height, data, start, rowPrefix } = image;
  if (start !== 0 || rowPrefix !== 1) throw new Error("encodePng takes pixels laid out as PNG_LAYOUT");
  if (prefersSub(data, width * 3, height)) filterSub(data, width * 3, height);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour RGB
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(data, { level: PNG_DEFLATE_LEVEL })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The header of a binary PPM (P6): what ImageMagick reads to write a JPEG. */
export function ppmHeader(width: number, height: number): Buffer {
  return Buffer.from(`P6\n${width} ${height}\n255\n`, "latin1");
}

/** Where the pixels go for encodePpm: after the header, rows back to back. */
export function ppmLayout(width: number, height: number): RgbLayout {
  return { start: ppmHeader(width, height).length, rowPrefix: 0 };
}

/** A binary PPM of an image laid out as ppmLayout: the header written in front of the pixels. */
export function encodePpm(image: RgbImage): Buffer {
  const header = ppmHeader(image.width, image.height);
  if (image.start !== header.length || image.rowPrefix !== 0) throw new Error("encodePpm takes pixels laid out as ppmLayout");
  header.copy(image.data, 0);
  return image.data;
}

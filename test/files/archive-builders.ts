import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { deflateRawSync } from "node:zlib";
import { pack, type Header } from "tar-stream";

export { zstdRawBlocks } from "../../bench/files.js";

/** Builds archives by hand so tests can make the hostile ones no well-behaved tool would write. */

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface ZipSpec {
  name: string | Buffer;
  data?: Buffer;
  method?: 0 | 8;
  /** Unix st_mode stored in the external attributes (made-by host set to Unix). */
  unixMode?: number;
  /** Lies written to both headers instead of the real uncompressed size. */
  declaredSize?: number;
  utf8?: boolean;
}

/** A zip file (local headers, data, central directory, end record) from `entries`. */
export function buildZip(entries: ZipSpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, "utf8");
    const data = e.data ?? Buffer.alloc(0);
    const method = e.method ?? 8;
    const stored = method === 8 ? deflateRawSync(data) : data;
    const size = e.declaredSize ?? data.length;
    const crc = crc32(data);
    const flags = e.utf8 === false ? 0 : 0x800;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE((45 << 9) | (1 << 5) | 1, 12); // 2025-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(method === 0 && e.declaredSize === undefined ? data.length : stored.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE((45 << 9) | (1 << 5) | 1, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.unixMode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, stored);
    centrals.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export interface TarSpec {
  header: Partial<Header> & { name: string };
  data?: Buffer;
}

/** A plain tar (tar-stream's writer) from `entries`, which may include links and devices. */
export async function buildTar(entries: TarSpec[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of p) chunks.push(c as Buffer);
  })();
  for (const e of entries) {
    await new Promise<void>((resolve, reject) =>
      p.entry({ mtime: new Date(1_700_000_000_000), mode: 0o644, ...e.header }, e.data ?? Buffer.alloc(0), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Writes a tar holding one file of `size` zero bytes, streamed (never in memory), through `compress`. */
export async function writeZeroTar(path: string, name: string, size: number, compress: NodeJS.ReadWriteStream): Promise<void> {
  const p = pack();
  const writing = pipeline(p, compress, createWriteStream(path));
  const entry = p.entry({ name, size, mode: 0o644, mtime: new Date(1_700_000_000_000) });
  const block = Buffer.alloc(1024 * 1024);
  let left = size;
  while (left > 0) {
    const n = Math.min(left, block.length);
    left -= n;
    if (!entry.write(n === block.length ? block : block.subarray(0, n))) await new Promise<void>((r) => entry.once("drain", () => r()));
  }
  entry.end(() => undefined);
  p.finalize();
  await writing;
}

/** A zip of `count` (at most 65,535: no zip64) empty stored files spread over 100 directories: an entry-count stress, not a bomb. */
export function manyEntryZip(count: number): Buffer {
  return buildZip(Array.from({ length: count }, (_, i) => ({ name: `d${i % 100}/f${i}`, method: 0 as const })));
}

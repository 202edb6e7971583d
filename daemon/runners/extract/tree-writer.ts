import { closeSync, constants, fchmodSync, futimesSync, mkdirSync, openSync, readFileSync, writevSync } from "node:fs";
import { chmod, open, utimes, type FileHandle } from "node:fs/promises";
import { join } from "node:path";

/**
 * Writes extracted entries under a fresh root that only this extraction uses. Because links are
 * refused and the root starts empty, no path component can be a symlink, so plain path joins are
 * safe. Permissions keep only rwx bits (setuid, setgid and sticky are dropped, ownership is never
 * applied); directory modes and mtimes are applied last, deepest first, since writing children
 * would otherwise change them.
 *
 * Small files (the bulk of most archives) are buffered and written with synchronous calls: a
 * handful of microseconds each, where five thread-pool round trips per file made extraction of
 * many small files several times slower than GNU tar. Larger files stream asynchronously.
 */

/** Files up to this size are written synchronously from memory. */
const SMALL_FILE_BYTES = 256 * 1024;

export class TreeWriter {
  private readonly made = new Set<string>([""]);
  private readonly dirMeta = new Map<string, { mode: number; mtime: Date | undefined }>();

  constructor(readonly root: string) {}

  /** A directory entry: created now, its mode and mtime applied in finish(). */
  async directory(rel: string, mode: number | undefined, mtime: Date | undefined): Promise<void> {
    this.ensureDir(rel);
    this.dirMeta.set(rel, { mode: dirMode(mode), mtime });
  }

  /** A regular file entry; `onChunk` sees every chunk before it is written (the budget throws there). */
  async file(
    rel: string,
    data: AsyncIterable<Buffer>,
    mode: number | undefined,
    mtime: Date | undefined,
    onChunk: (n: number) => void,
  ): Promise<void> {
    const slash = rel.lastIndexOf("/");
    if (slash > 0) this.ensureDir(rel.slice(0, slash));
    const perm = fileMode(mode);
    const abs = join(this.root, rel);
    const head: Buffer[] = [];
    let bytes = 0;
    const iterator = data[Symbol.asyncIterator]();
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        onChunk(next.value.length);
        head.push(next.value);
        bytes += next.value.length;
        if (bytes > SMALL_FILE_BYTES)
          return await this.streamFile(abs, head, { [Symbol.asyncIterator]: () => iterator }, perm, mtime, onChunk);
      }
    } catch (err) {
      await iterator.return?.();
      throw err;
    }
    writeSmallFile(abs, head.length > 256 ? [Buffer.concat(head)] : head, perm, mtime);
  }

  /** A regular file whose whole (already counted) content is in memory; written synchronously. */
  smallFile(rel: string, content: Buffer, mode: number | undefined, mtime: Date | undefined): void {
    const slash = rel.lastIndexOf("/");
    if (slash > 0) this.ensureDir(rel.slice(0, slash));
    writeSmallFile(join(this.root, rel), [content], fileMode(mode), mtime);
  }

  /** Applies directory modes  /** Applies directory modes and mtimes, children before parents. */
  async finish(): Promise<void> {
    const dirs = [...this.dirMeta.entries()].sort((a, b) => b[0].split("/").length - a[0].split("/").length);
    for (const [rel, meta] of dirs) {
      const abs = join(this.root, rel);
      await chmod(abs, meta.mode);
      if (validDate(meta.mtime)) await utimes(abs, meta.mtime, meta.mtime);
    }
  }

  private async streamFile(
    abs: string,
    head: Buffer[],
    rest: AsyncIterable<Buffer>,
    perm: number,
    mtime: Date | undefined,
    onChunk: (n: number) => void,
  ): Promise<void> {
    const handle: FileHandle = await open(abs, "w", perm);
    try {
      let position = (await handle.writev(head, 0)).bytesWritten;
      for await (const chunk of rest) {
        onChunk(chunk.length);
        await handle.write(chunk, 0, chunk.length, position);
        position += chunk.length;
      }
      await handle.chmod(perm);
      if (validDate(mtime)) await handle.utimes(mtime, mtime);
    } finally {
      await handle.close();
    }
  }

  private ensureDir(rel: string): void {
    if (this.made.has(rel)) return;
    mkdirSync(join(this.root, rel), { recursive: true, mode: 0o755 });
    // mkdir -p made every ancestor too.
    for (let p = rel; p && !this.made.has(p); p = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "") this.made.add(p);
  }
}

/** rwx bits only, owner always able to read and write; 0644 when the archive gives none. */
export function fileMode(mode: number | undefined): number {
  const perm = (mode ?? 0) & 0o777;
  return perm === 0 ? 0o644 : perm | 0o600;
}

/** rwx bits only, owner always able to enter and write; 0755 when the archive gives none. */
export function dirMode(mode: number | undefined): number {
  const perm = (mode ?? 0) & 0o777;
  return perm === 0 ? 0o755 : perm | 0o700;
}

/** The process's umask, read once (it never changes in the daemon): whether a created file already has its mode. */
const UMASK = readUmask();

/** From /proc (process.umask() without an argument is deprecated, and setting it to read it races); unknown: every bit, so every file is chmodded. */
function readUmask(): number {
  try {
    const m = /^Umask:\s*([0-7]+)$/m.exec(readFileSync("/proc/self/status", "utf8"));
    return m ? Number.parseInt(m[1]!, 8) : 0o777;
  } catch {
    return 0o777;
  }
}

const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/**
 * Creates the file (O_EXCL: in a fresh root it is new, so the mode given is its mode, less the
 * umask) and writes it; the fchmod is needed only when the umask took bits, or when an archive
 * listed the same name twice and the file is opened again.
 */
function writeSmallFile(abs: string, chunks: Buffer[], perm: number, mtime: Date | undefined): void {
  let fd: number;
  let chmod = (perm & UMASK) !== 0;
  try {
    fd = openSync(abs, CREATE_NEW, perm);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    fd = openSync(abs, "w", perm);
    chmod = true;
  }
  try {
    let total = chunks.reduce((n, c) => n + c.length, 0);
    let data = chunks;
    while (total > 0) {
      const written = writevSync(fd, data);
      total -= written;
      if (total > 0) data = [Buffer.concat(data).subarray(written)];
    }
    if (chmod) fchmodSync(fd, perm);
    if (validDate(mtime)) futimesSync(fd, mtime, mtime);
  } finally {
    closeSync(fd);
  }
}

function validDate(d: Date | undefined): d is Date {
  return d !== undefined && !Number.isNaN(d.getTime());
}

import { chmod, mkdir, open, utimes } from "node:fs/promises";
import { join } from "node:path";

/**
 * Writes extracted entries under a fresh root that only this extraction uses. Because links are
 * refused and the root starts empty, no path component can be a symlink, so plain path joins are
 * safe. Permissions keep only rwx bits (setuid, setgid and sticky are dropped, ownership is never
 * applied); directory modes and mtimes are applied last, deepest first, since writing children
 * would otherwise change them.
 */
export class TreeWriter {
  private readonly made = new Set<string>([""]);
  private readonly dirMeta = new Map<string, { mode: number; mtime: Date | undefined }>();

  constructor(readonly root: string) {}

  /** A directory entry: created now, its mode and mtime applied in finish(). */
  async directory(rel: string, mode: number | undefined, mtime: Date | undefined): Promise<void> {
    await this.ensureDir(rel);
    this.dirMeta.set(rel, { mode: dirMode(mode), mtime });
  }

  /** A regular file entry; `onChunk` sees every chunk before it is written (the budget throws there). */
  async file(rel: string, data: AsyncIterable<Buffer>, mode: number | undefined, mtime: Date | undefined, onChunk: (n: number) => void): Promise<void> {
    const slash = rel.lastIndexOf("/");
    if (slash > 0) await this.ensureDir(rel.slice(0, slash));
    const perm = fileMode(mode);
    const handle = await open(join(this.root, rel), "w", perm);
    try {
      let position = 0;
      for await (const chunk of data) {
        onChunk(chunk.length);
        await handle.write(chunk, 0, chunk.length, position);
        position += chunk.length;
      }
      await handle.chmod(perm);
      if (mtime && !Number.isNaN(mtime.getTime())) await handle.utimes(mtime, mtime);
    } finally {
      await handle.close();
    }
  }

  /** Applies directory modes and mtimes, children before parents. */
  async finish(): Promise<void> {
    const dirs = [...this.dirMeta.entries()].sort((a, b) => b[0].split("/").length - a[0].split("/").length);
    for (const [rel, meta] of dirs) {
      const abs = join(this.root, rel);
      await chmod(abs, meta.mode);
      if (meta.mtime && !Number.isNaN(meta.mtime.getTime())) await utimes(abs, meta.mtime, meta.mtime);
    }
  }

  private async ensureDir(rel: string): Promise<void> {
    if (this.made.has(rel)) return;
    await mkdir(join(this.root, rel), { recursive: true, mode: 0o755 });
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

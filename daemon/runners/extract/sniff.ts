import type { FileHandle } from "node:fs/promises";
import { ActionError } from "../../../protocol/errors.js";

/** Archive formats files.extract understands. */
export const ARCHIVE_FORMATS = ["tar", "tar.gz", "tar.xz", "tar.zst", "zip"] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

/**
 * Tells an archive's format from its first bytes, never from its file name (downloads are often
 * named `download` or carry the wrong extension).
 */
export function formatFromMagic(head: Buffer): ArchiveFormat | null {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (starts(0x1f, 0x8b)) return "tar.gz";
  if (starts(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)) return "tar.xz";
  if (starts(0x28, 0xb5, 0x2f, 0xfd)) return "tar.zst";
  if (starts(0x50, 0x4b, 0x03, 0x04) || starts(0x50, 0x4b, 0x05, 0x06)) return "zip";
  if (head.length >= 512 && (head.toString("latin1", 257, 262) === "ustar" || tarChecksumMatches(head))) return "tar";
  return null;
}

/** Reads the head of the archive open as `handle` (named `path` in messages) and names its format; `requested` must agree when given. */
export async function detectArchiveFormat(handle: FileHandle, path: string, requested?: ArchiveFormat): Promise<ArchiveFormat> {
  const head = Buffer.alloc(512);
  const { bytesRead: length } = await handle.read(head, 0, 512, 0);
  const sniffed = formatFromMagic(head.subarray(0, length));
  if (requested && sniffed && sniffed !== requested) {
    throw new ActionError("invalid_request", `${path} looks like ${sniffed}, not ${requested}; drop "format" to use what the file is`, {
      path: "/format",
    });
  }
  const format = requested ?? sniffed;
  if (!format) {
    throw new ActionError("invalid_request", `${path} is not a tar, tar.gz, tar.xz, tar.zst or zip archive (unrecognised first bytes)`, {
      path: "/archive",
    });
  }
  return format;
}

/** Pre-POSIX tars have no magic; a valid header checksum is the tell. */
function tarChecksumMatches(block: Buffer): boolean {
  const stored = parseInt(
    block
      .toString("latin1", 148, 156)
      .replace(/[\0 ]+$/, "")
      .trim(),
    8,
  );
  if (!Number.isFinite(stored)) return false;
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum === stored && block[0] !== 0;
}

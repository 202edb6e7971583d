import { closeSync, openSync } from "node:fs";

const MAX_OPEN = 64;
const open = new Map<string, number>();

/**
 * A read-only descriptor for a log segment, kept open across reads (an open and a close per
 * 256 KiB read cost more than the read); the least recently used of at most 64 is closed.
 */
export function readerFd(path: string): number {
  const cached = open.get(path);
  if (cached !== undefined) {
    open.delete(path);
    open.set(path, cached);
    return cached;
  }
  const fd = openSync(path, "r");
  open.set(path, fd);
  if (open.size > MAX_OPEN) {
    const [oldest, oldFd] = open.entries().next().value as [string, number];
    open.delete(oldest);
    closeSync(oldFd);
  }
  return fd;
}

/** Closes the cached descriptor of a segment that is about to be deleted. */
export function forgetReader(path: string): void {
  const fd = open.get(path);
  if (fd === undefined) return;
  open.delete(path);
  closeSync(fd);
}

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomicSync } from "../util/atomic-write.js";
import { readRegularFileSync } from "../util/regular-file.js";

/** Flakes, locks and the files they import are source text; anything bigger is not read into memory. */
const MAX_FLAKE_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads a file in the workspace (which its jobs control) on the main thread: undefined when it is
 * missing; a FIFO, directory or device is refused with `invalid_request` naming it instead of
 * blocking the daemon, a file over MAX_FLAKE_FILE_BYTES with `limit_exceeded`.
 */
export function readWorkspaceFile(path: string): Buffer | undefined {
  return readRegularFileSync(path, MAX_FLAKE_FILE_BYTES);
}

/** Writes only when the content differs, so Nix and mtime checks never see a rewrite as a change. */
export function writeFileIfChanged(path: string, content: string | Buffer): boolean {
  const data = typeof content === "string" ? Buffer.from(content) : content;
  let current: Buffer | undefined;
  try {
    current = readWorkspaceFile(path);
  } catch {
    /* not a regular file: replaced below */
  }
  if (current?.equals(data)) return false;
  if (current === undefined) mkdirSync(dirname(path), { recursive: true });
  writeFileAtomicSync(path, data);
  return true;
}

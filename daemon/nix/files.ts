import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomicSync } from "../util/atomic-write.js";

/** Writes only when the content differs, so Nix and mtime checks never see a rewrite as a change. */
export function writeFileIfChanged(path: string, content: string | Buffer): boolean {
  const data = typeof content === "string" ? Buffer.from(content) : content;
  try {
    if (readFileSync(path).equals(data)) return false;
  } catch {
    mkdirSync(dirname(path), { recursive: true });
  }
  writeFileAtomicSync(path, data);
  return true;
}

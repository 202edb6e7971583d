import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { ActionError } from "../../protocol/errors.js";
import { readWorkspaceFile } from "./files.js";

/** What a cached flake environment was evaluated from: cheap stat fields plus the content hash. */
export interface FileFingerprint {
  path: string;
  size: number;
  mtimeNs: string;
  sha256: string | null; // null: the file did not exist
}

/** The file's content hash; undefined when it is gone (a FIFO or device throws `invalid_request`). */
function hashFile(path: string): string | undefined {
  const data = readWorkspaceFile(path);
  return data && createHash("sha256").update(data).digest("hex");
}

/** Takes a fingerprint of each file (missing files are recorded as missing). */
export function fingerprintFiles(paths: readonly string[]): FileFingerprint[] {
  return [...new Set(paths)].sort().map((path) => {
    try {
      const st = statSync(path, { bigint: true });
      const sha256 = hashFile(path);
      if (sha256 !== undefined) return { path, size: Number(st.size), mtimeNs: st.mtimeNs.toString(), sha256 };
    } catch (err) {
      if (err instanceof ActionError) throw err;
    }
    return { path, size: -1, mtimeNs: "0", sha256: null };
  });
}

/**
 * Whether the files still match: equal size and mtime (in ns) is trusted; otherwise the content hash
 * decides, so a plain `touch` is not a change but an edit of equal size is.
 */
export function fingerprintsMatch(prints: readonly FileFingerprint[]): boolean {
  for (const fp of prints) {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(fp.path, { bigint: true });
    } catch {
      if (fp.sha256 === null) continue;
      return false;
    }
    if (fp.sha256 === null) return false;
    if (Number(st.size) === fp.size && st.mtimeNs.toString() === fp.mtimeNs) continue;
    if (Number(st.size) !== fp.size) return false;
    try {
      if (hashFile(fp.path) !== fp.sha256) return false;
    } catch {
      return false;
    }
  }
  return true;
}

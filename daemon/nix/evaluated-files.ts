import { readWorkspaceFile } from "./files.js";
import { dirname, join, relative } from "node:path";

/**
 * Maps `evaluating file '/nix/store/…-source/x'` back to the workspace for the flake in `dir`. Our
 * flake's store copies are the ones whose flake.nix equals the local one (Nix may copy it twice:
 * before and after writing a new lock); inputs' files are left out.
 */
export function evaluatedWorkspaceFiles(evaluated: readonly string[], dir: string, workspace: string): string[] {
  let local: Buffer | undefined;
  try {
    local = readWorkspaceFile(join(dir, "flake.nix"));
  } catch {
    /* not a regular file: nothing maps back */
  }
  if (!local) return [];
  const ours = new Set<string>();
  for (const f of evaluated) {
    if (!f.endsWith("/flake.nix")) continue;
    try {
      if (readWorkspaceFile(f)?.equals(local)) ours.add(dirname(f));
    } catch {
      /* not readable: not ours */
    }
  }
  const out: string[] = [];
  for (const f of evaluated) {
    const storeDir = [...ours].find((d) => f.startsWith(`${d}/`));
    if (!storeDir) continue;
    const mapped = join(dir, f.slice(storeDir.length + 1));
    if (!relative(workspace, mapped).startsWith("..")) out.push(mapped);
  }
  return out;
}

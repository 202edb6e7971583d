import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import type { CodeLanguage } from "../../protocol/actions/code.js";
import type { WorkspaceEnvironment } from "../environment/resolver.js";

/**
 * Debian's Python, the image's: the one its python3-matplotlib, -pandas and -pil belong to. Chosen
 * on purpose over `python3` on PATH, which on these machines may be a pyenv shim without them.
 */
export const SYSTEM_PYTHON = "/usr/bin/python3";

const PROGRAM: Record<CodeLanguage, string> = { python: "python3", javascript: "node" };

/** Where a context's interpreter came from: named by the request, the prepared workspace's, or the image's / the daemon's own. */
export type InterpreterSource = "given" | "workspace" | "system";

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The directories a prepared workspace puts on PATH (only its own, not the daemon's). */
function workspaceBinDirs(workspace: WorkspaceEnvironment): string[] {
  const fromSet = workspace.set.PATH ? workspace.set.PATH.split(":") : [];
  return [...(workspace.prepend.PATH ?? []), ...fromSet].filter((dir) => dir.startsWith("/"));
}

/**
 * The interpreter a context runs: the one the request names; else, in a prepared workspace that
 * provides one, the workspace's (its packages come with it); else Debian's python3 or the daemon's
 * own node. Never a lookup on the daemon's PATH, whose first python3 may not be the image's.
 */
export function interpreterFor(
  language: CodeLanguage,
  workspace: WorkspaceEnvironment | null,
  given?: string,
): { path: string; source: InterpreterSource } {
  if (given !== undefined) return { path: given, source: "given" };
  if (workspace) {
    for (const dir of workspaceBinDirs(workspace)) {
      const candidate = join(dir, PROGRAM[language]);
      if (isExecutable(candidate)) return { path: candidate, source: "workspace" };
    }
  }
  return { path: language === "python" ? SYSTEM_PYTHON : process.execPath, source: "system" };
}

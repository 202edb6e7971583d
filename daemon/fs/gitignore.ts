import { runGit } from "../runners/git.js";

/**
 * The paths git ignores under `dir`, relative to it: asked of git itself (`ls-files --others
 * --ignored --exclude-standard --directory`), so every rule git knows (nested .gitignore,
 * .git/info/exclude, core.excludesFile, negations) applies. An ignored directory is one entry
 * ("node_modules/"), never its contents. Outside a repository: undefined (nothing is ignored).
 */
export async function ignoredPaths(dir: string, signal?: AbortSignal): Promise<Set<string> | undefined> {
  const result = await runGit(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], {
    cwd: dir,
    signal,
    allowFailure: true,
  });
  if (result.exitCode !== 0) return undefined;
  const ignored = new Set<string>();
  for (const entry of result.stdout.split("\0")) if (entry) ignored.add(entry.replace(/\/$/, ""));
  return ignored;
}

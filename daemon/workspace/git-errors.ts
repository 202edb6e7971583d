import { ActionError } from "../../protocol/errors.js";
import { GitFailure } from "../runners/git.js";

/**
 * Turns a git failure no operation anticipated into a wire error: a lock file another git process
 * holds (the agent running git in the same worktree) is a `conflict` with the way out; anything
 * else is `internal` with git's own last lines. ActionErrors and other errors pass through.
 */
export function gitErrorToAction(error: unknown): unknown {
  if (!(error instanceof GitFailure)) return error;
  const said = error.stderr.trim().split("\n").slice(-3).join(" | ");
  const lock = /Unable to create '([^']+\.lock)': File exists/.exec(error.stderr);
  if (lock) {
    return new ActionError(
      "conflict",
      `another git command is working in this repository (${lock[1]} exists); retry when it has finished, or delete that file if no git process is running`,
      {
        details: { lockFile: lock[1] },
      },
    );
  }
  return new ActionError("internal", `git ${error.args[0] ?? ""} failed (exit ${error.exitCode}): ${said}`);
}

/** Awaits `work`, mapping git failures to ActionErrors. */
export async function mappingGitErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw gitErrorToAction(error);
  }
}

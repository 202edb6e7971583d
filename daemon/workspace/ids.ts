import { ActionError } from "../../protocol/errors.js";
import { WORKSPACE_ID_PATTERN } from "../../protocol/workspace.js";

/**
 * Repository and task ids become directory names and branch names (`task-<id>`), so they follow
 * one strict grammar: a letter or digit first (never `.` or `-`, so no hidden files, no option
 * lookalikes, no `..`), then letters, digits, `_`, `-` or single dots, at most 64 characters,
 * and never ending in `.` or `.lock` (both are invalid in git ref names).
 */
export const ID_MAX_LENGTH = 64;
const ID_REGEX = new RegExp(WORKSPACE_ID_PATTERN);

/** The repository key of a project without a repository. */
export const DEFAULT_REPO_ID = "default";

/** Whether a string is a valid repository or task id. */
export function isValidId(value: string): boolean {
  return ID_REGEX.test(value);
}

/** Returns the id unchanged or throws invalid_request naming the field and the grammar. */
export function checkId(value: string, kind: "repo" | "task", path: string): string {
  if (!isValidId(value)) {
    const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
    throw new ActionError(
      "invalid_request",
      `${kind} id ${shown} is not allowed: use 1-${ID_MAX_LENGTH} letters, digits, '_', '-' or single '.', starting with a letter or digit and not ending in '.' or '.lock' (e.g. "api" or "fix-login-42")`,
      { path },
    );
  }
  return value;
}

/** The branch a task's worktree lives on. */
export function taskBranch(taskId: string): string {
  return `task-${taskId}`;
}

/**
 * Checks a user-supplied ref or branch name before it reaches git's argv: no leading `-` (it would
 * read as an option), no control characters or spaces,
 * no `..` ranges or `rev:path` forms, bounded length. Git itself then decides whether it exists.
 */
export function checkRefArgument(value: string, path: string): string {
  if (value.length === 0 || value.length > 256 || value.startsWith("-") || /[\x00-\x20\x7f:]|\.\./.test(value)) {
    throw new ActionError(
      "invalid_request",
      `ref ${JSON.stringify(value.slice(0, 80))} is not allowed: give a branch, tag or commit id such as "main", "v1.2", "HEAD~1" or a full SHA`,
      { path },
    );
  }
  return value;
}

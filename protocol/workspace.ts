import { Type } from "@sinclair/typebox";

/**
 * Shapes shared by the coding-workspace actions (repos.*, tasks.*, secrets.write).
 * Repository and task ids become directory and branch names (`task-<id>`): a letter or digit
 * first, then letters, digits, `_`, `-` or single dots, at most 64, not ending in `.` or `.lock`.
 */
export const WORKSPACE_ID_PATTERN = "^(?![\\s\\S]*\\.[lL][oO][cC][kK]$)(?![\\s\\S]*\\.$)[A-Za-z0-9](?:[A-Za-z0-9_-]|\\.(?!\\.)){0,63}$";

export const RepoId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: WORKSPACE_ID_PATTERN,
  description: 'Repository id, e.g. "api"; "default" when omitted',
});
export const TaskId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: WORKSPACE_ID_PATTERN,
  description: 'Task id, e.g. "fix-login-42"; its branch is task-<id>',
});
export const GitRef = Type.String({ minLength: 1, maxLength: 256, description: 'A branch, tag or commit, e.g. "main", "v1.2", "HEAD~1"' });

export const RepoInfo = Type.Object({
  repo: Type.String(),
  path: Type.String({ description: "the shared clone: <root>/project/repos/<repo>/repo" }),
  branch: Type.Union([Type.String(), Type.Null()], { description: "checked-out branch of the clone (null when detached)" }),
  commit: Type.Union([Type.String(), Type.Null()]),
  origin: Type.Union([Type.String(), Type.Null()], { description: "remote.origin.url, credentials masked" }),
});

export const TaskInfo = Type.Object({
  task: Type.String(),
  repo: Type.String(),
  branch: Type.String(),
  base: Type.String(),
  baseCommit: Type.String(),
  createdAt: Type.String(),
  path: Type.String({ description: "the task's worktree: <root>/tasks/<task>/repo" }),
  commit: Type.Union([Type.String(), Type.Null()], { description: "the worktree's HEAD (null when the worktree is missing)" }),
});

/** The longest wait for the repository's lock; past it the call answers `conflict` naming the holder. */
export const LockTimeoutMs = Type.Integer({
  minimum: 0,
  maximum: 3_600_000,
  description: "longest wait for the repository lock, in ms (default 30000); past it: conflict naming the holder",
});
/** The parameter every action that takes a repository lock accepts. */
export const LockWaitParams = { lockTimeoutMs: Type.Optional(LockTimeoutMs) };

/** Milliseconds this call waited for the repository's lock (0 when it was free). */
export const LockWaitMs = Type.Integer({ minimum: 0, description: "time spent waiting for the repository lock" });

import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { ActionError } from "../../protocol/errors.js";
import { runGit } from "../runners/git.js";
import type { WorkspaceDeps } from "./deps.js";
import { repoLockOptions, type LockWaitParams } from "./repo-lock.js";
import { formatEnvFile } from "./env-file.js";
import { commonGitDir, envIsTracked, pinEnvExclude, type WorkContext } from "./git-helpers.js";
import { checkId } from "./ids.js";
import { requireRepo } from "./repos.js";
import { loadTask } from "./tasks.js";

export interface WriteSecretsParams extends LockWaitParams {
  repo?: string;
  task?: string;
  values: Record<string, string>;
}

/** What secrets.write reports: where, and which names — never a value. */
export interface WriteSecretsResult {
  repo: string;
  task?: string;
  path: string;
  names: string[];
  lockWaitMs: number;
}

/**
 * Replaces the root `.env` of a repository's clone or of a task's worktree with exactly `values`,
 * atomically and with mode 0600. The temporary file is written beside the worktree (in the repo's
 * or task's directory), never inside it, so a crash cannot leave secrets where `git add -A` sees
 * them. Refused (conflict) when `.env` is tracked, is a directory or symlink, or a .gitignore rule
 * re-includes it. Values travel only from the request to the file: no log, no argv, no env, no echo.
 */
export async function writeSecrets(deps: WorkspaceDeps, params: WriteSecretsParams, ctx: WorkContext = {}): Promise<WriteSecretsResult> {
  if ((params.repo === undefined) === (params.task === undefined)) {
    throw new ActionError("invalid_request", "give exactly one of repo (the shared clone's .env) or task (that task's worktree .env)", {
      path: params.repo === undefined ? "/repo" : "/task",
    });
  }
  const text = formatEnvFile(params.values); // validate everything before touching the disk
  let repo: string;
  let worktree: string;
  let task: string | undefined;
  if (params.task !== undefined) {
    const meta = await loadTask(deps, checkId(params.task, "task", "/task"));
    ({ repo, path: worktree, task } = meta);
  } else {
    repo = checkId(params.repo!, "repo", "/repo");
    worktree = await requireRepo(deps, repo);
  }
  const signal = ctx.signal;
  return deps.locks.withLock(repo, repoLockOptions(`secrets.write ${task ?? repo}`, params, ctx), async (lock) => {
    await pinEnvExclude(await commonGitDir(worktree, signal));
    const target = path.join(worktree, ".env");
    if (await envIsTracked(worktree, signal)) {
      throw new ActionError(
        "conflict",
        `${target} is tracked by git, so secrets written there could be committed; untrack it first (git rm --cached .env, then commit) and call secrets.write again`,
        { path: params.task !== undefined ? "/task" : "/repo" },
      );
    }
    const ignored = await runGit(["check-ignore", "-q", "--", ".env"], { cwd: worktree, signal, allowFailure: true });
    if (ignored.exitCode !== 0) {
      throw new ActionError(
        "conflict",
        `${target} is not ignored by git (a .gitignore rule such as "!.env" re-includes it); remove that rule and call secrets.write again`,
      );
    }
    const existing = await fs.lstat(target).catch(() => undefined);
    if (existing && !existing.isFile()) {
      throw new ActionError(
        "conflict",
        `${target} exists and is not a regular file (directory or symlink); remove it and call secrets.write again`,
      );
    }
    await writePrivateFile(target, path.dirname(worktree), text);
    return {
      repo,
      ...(task !== undefined ? { task } : {}),
      path: target,
      names: Object.keys(params.values).sort(),
      lockWaitMs: lock.waitedMs,
    };
  });
}

/** Writes `text` to `target` with mode 0600 via a temp file in `tmpDir` (same filesystem), fsync, rename. */
async function writePrivateFile(target: string, tmpDir: string, text: string): Promise<void> {
  const tmp = path.join(tmpDir, `.env.hotline-${randomBytes(6).toString("hex")}.tmp`);
  const handle = await fs.open(tmp, "wx", 0o600);
  try {
    await handle.chmod(0o600); // the mode argument is filtered by umask; be exact
    await handle.writeFile(text);
    await handle.sync();
    await handle.close();
    await fs.rename(tmp, target);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(tmp, { force: true });
    throw error;
  }
}

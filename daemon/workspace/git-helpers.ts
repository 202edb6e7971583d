import fs from "node:fs/promises";
import path from "node:path";
import { ActionError } from "../../protocol/errors.js";
import type { RunContext } from "../runners/context.js";
import { runGit } from "../runners/git.js";
import { checkRefArgument } from "./ids.js";

/** The part of a RunContext workspace operations use; jobs pass theirs, quick actions just a signal. */
export type WorkContext = Partial<Pick<RunContext, "signal" | "progress" | "output" | "log">>;

/** An author/committer identity for commits the daemon makes. */
export interface GitIdentity {
  name: string;
  email: string;
}

/** Used when neither the repository nor the user's git config names anyone. */
export const FALLBACK_IDENTITY: GitIdentity = { name: "hotline", email: "hotline@localhost" };

/**
 * The identity for a commit in `cwd`: the repository's own git config (local, then global) when it
 * sets both user.name and user.email, else the fallback. Passed as GIT_AUTHOR_* / GIT_COMMITTER_*
 * variables so it never depends on the daemon's own environment.
 */
export async function identityEnv(cwd: string, fallback: GitIdentity, signal?: AbortSignal): Promise<Record<string, string>> {
  const get = async (key: string) => (await runGit(["config", "--get", key], { cwd, signal, allowFailure: true })).stdout.trim();
  const [name, email] = await Promise.all([get("user.name"), get("user.email")]);
  const who = name && email ? { name, email } : fallback;
  return { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email };
}

/** Resolves a user-supplied ref to a commit id, or throws not_found naming the field. */
export async function resolveCommit(cwd: string, ref: string, fieldPath: string, signal?: AbortSignal): Promise<string> {
  checkRefArgument(ref, fieldPath);
  const r = await runGit(["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`], { cwd, signal, allowFailure: true });
  if (r.exitCode !== 0)
    throw new ActionError(
      "not_found",
      `ref ${JSON.stringify(ref)} does not name a commit in ${cwd}; list branches with repos.list or pass a commit id`,
      { path: fieldPath },
    );
  return r.stdout.trim();
}

/** The checked-out branch (null when detached) and commit (null when no commit exists yet). */
export async function headInfo(cwd: string, signal?: AbortSignal): Promise<{ branch: string | null; commit: string | null }> {
  const [branch, commit] = await Promise.all([
    runGit(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd, signal, allowFailure: true }),
    runGit(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd, signal, allowFailure: true }),
  ]);
  return { branch: branch.exitCode === 0 ? branch.stdout.trim() : null, commit: commit.exitCode === 0 ? commit.stdout.trim() : null };
}

/** The shared git directory of a clone or any of its worktrees. */
export async function commonGitDir(cwd: string, signal?: AbortSignal): Promise<string> {
  const r = await runGit(["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd, signal });
  return r.stdout.trim();
}

/** The exclude line that keeps the root `.env` out of every worktree of a clone. */
export const ENV_EXCLUDE_LINE = "/.env";

/**
 * Pins `/.env` in the clone's `info/exclude` (shared by all its worktrees), idempotently and
 * atomically. This is the first of three layers; commit's explicit reset and the secret writer's
 * tracked-file check are the others.
 */
export async function pinEnvExclude(gitCommonDir: string): Promise<void> {
  const file = path.join(gitCommonDir, "info", "exclude");
  await fs.mkdir(path.dirname(file), { recursive: true });
  let text = "";
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (text.split(/\r?\n/).some((line) => line.trim() === ENV_EXCLUDE_LINE)) return;
  const next = `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}# hotline: the root .env holds secrets and is never committed\n${ENV_EXCLUDE_LINE}\n`;
  const tmp = `${file}.hotline-${process.pid}-${Date.now()}`;
  await fs.writeFile(tmp, next, { mode: 0o644 });
  await fs.rename(tmp, file);
}

/** Whether `.env` at the worktree root is in the index (tracked); such a file is never written. */
export async function envIsTracked(worktree: string, signal?: AbortSignal): Promise<boolean> {
  const r = await runGit(["ls-files", "-z", "--cached", "--", ":(top,literal).env"], { cwd: worktree, signal });
  return r.stdout.length > 0;
}

/** Whether a path exists (any type). */
export async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** A directory's entry names, or none when it does not exist yet. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/**
 * Deletes what a crashed operation left in a repository's directory (`.repo.partial-*` clones,
 * `.merge-*` worktrees). Call only while holding the repository's lock: then no live operation
 * of any process can own them.
 */
export async function sweepLeftovers(repoDir: string, prefix: string): Promise<number> {
  const stale = (await listDir(repoDir)).filter((name) => name.startsWith(prefix));
  await Promise.all(stale.map((name) => fs.rm(path.join(repoDir, name), { recursive: true, force: true })));
  return stale.length;
}

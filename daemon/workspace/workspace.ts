import path from "node:path";
import { bundleRepo, snapshotRepo } from "./archive.js";
import { commitTask } from "./commit.js";
import type { WorkspaceDeps } from "./deps.js";
import { mappingGitErrors } from "./git-errors.js";
import { FALLBACK_IDENTITY, type GitIdentity, type WorkContext } from "./git-helpers.js";
import { WorkspaceLayout } from "./layout.js";
import { mergeTask } from "./merge.js";
import { RepoLocks, type LockWaitParams } from "./repo-lock.js";
import { addRepo, checkAddRepo, listRepos, requireRepo, type AddRepoParams } from "./repos.js";
import { resolveCommit } from "./git-helpers.js";
import { checkId, DEFAULT_REPO_ID } from "./ids.js";
import { writeSecrets, type WriteSecretsParams } from "./secrets.js";
import { ensureTask } from "./ensure-task.js";
import { createTask, listTasks, removeTask, type CreateTaskParams } from "./tasks.js";

export interface WorkspaceOptions {
  /** The workspace root (config `workspaceRoot`, default /workspace). */
  root: string;
  /** The daemon's state directory: snapshots/ and bundles/ go under it. */
  stateDir: string;
  /** Identity for commits when the repository's git config names nobody (default hotline <hotline@localhost>). */
  identity?: GitIdentity;
}

/** The coding workspace: one object the action handlers call; each method is one action's domain logic. */
export class Workspace {
  readonly deps: WorkspaceDeps;

  constructor(options: WorkspaceOptions) {
    const layout = new WorkspaceLayout(options.root);
    this.deps = {
      layout,
      locks: new RepoLocks((repoId) => layout.lockPath(repoId)),
      stateDir: path.resolve(options.stateDir),
      identity: options.identity ?? FALLBACK_IDENTITY,
    };
  }

  get layout(): WorkspaceLayout {
    return this.deps.layout;
  }

  get locks(): RepoLocks {
    return this.deps.locks;
  }

  /** repos.add: clone or init a repository's shared clone (long: run as a job). */
  addRepo(params: AddRepoParams, ctx?: WorkContext) {
    return mappingGitErrors(addRepo(this.deps, params, ctx));
  }

  /** Refuses a repos.add at once (bad id/url, repository exists) before a job is started for it. */
  async checkAddRepo(params: AddRepoParams): Promise<void> {
    await checkAddRepo(this.deps, params);
  }

  /** Refuses a snapshot/bundle at once (unknown repository or ref); returns the clone path and commit. */
  async checkRepoRef(
    params: { repo?: string; ref?: string },
    signal?: AbortSignal,
  ): Promise<{ repo: string; clonePath: string; commit?: string }> {
    const repo = checkId(params.repo ?? DEFAULT_REPO_ID, "repo", "/repo");
    const clonePath = await requireRepo(this.deps, repo);
    const commit = params.ref !== undefined ? await resolveCommit(clonePath, params.ref, "/ref", signal) : undefined;
    return { repo, clonePath, ...(commit !== undefined ? { commit } : {}) };
  }

  /** repos.list */
  listRepos(ctx?: WorkContext) {
    return mappingGitErrors(listRepos(this.deps, ctx));
  }

  /** repos.snapshot: tar.gz of the tree at a ref (long: run as a job). */
  snapshot(params: { repo?: string; ref?: string }, ctx?: WorkContext) {
    return mappingGitErrors(snapshotRepo(this.deps, params, ctx));
  }

  /** repos.bundle: full-history bundle for recovery (long: run as a job). */
  bundle(params: { repo?: string } & LockWaitParams, ctx?: WorkContext) {
    return mappingGitErrors(bundleRepo(this.deps, params, ctx));
  }

  /** tasks.create */
  createTask(params: CreateTaskParams, ctx?: WorkContext) {
    return mappingGitErrors(createTask(this.deps, params, ctx));
  }

  /** tasks.run: the task, created first when it does not exist. */
  ensureTask(params: CreateTaskParams, ctx?: WorkContext) {
    return mappingGitErrors(ensureTask(this.deps, params, ctx));
  }

  /** tasks.list */
  listTasks(filter: { repo?: string } = {}, ctx?: WorkContext) {
    return mappingGitErrors(listTasks(this.deps, filter, ctx));
  }

  /** tasks.commit */
  commit(params: { task: string; message: string } & LockWaitParams, ctx?: WorkContext) {
    return mappingGitErrors(commitTask(this.deps, params, ctx));
  }

  /** tasks.merge */
  merge(params: { task: string; into?: string } & LockWaitParams, ctx?: WorkContext) {
    return mappingGitErrors(mergeTask(this.deps, params, ctx));
  }

  /** tasks.remove */
  removeTask(params: { task: string; force?: boolean } & LockWaitParams, ctx?: WorkContext) {
    return mappingGitErrors(removeTask(this.deps, params, ctx));
  }

  /** secrets.write */
  writeSecrets(params: WriteSecretsParams, ctx?: WorkContext) {
    return mappingGitErrors(writeSecrets(this.deps, params, ctx));
  }
}

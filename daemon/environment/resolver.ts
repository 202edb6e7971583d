/** The environment a prepared workspace adds to jobs whose cwd lies inside it. */
export interface WorkspaceEnvironment {
  /** The workspace directory this environment belongs to. */
  workspace: string;
  /** Variables set for the job (the job's own `env` still wins). */
  set: Record<string, string>;
  /** Path-list fragments prepended to the job's own value (PATH, XDG_DATA_DIRS), de-duplicated. */
  prepend: Record<string, string[]>;
}

/**
 * The seam between jobs and prepared environments: given a cwd, the environment of the deepest
 * prepared workspace containing it. Must answer from memory or a cheap file read — never run Nix.
 */
export interface EnvironmentResolver {
  resolve(cwd: string): WorkspaceEnvironment | null;
}

import type { GitIdentity } from "./git-helpers.js";
import type { WorkspaceLayout } from "./layout.js";
import type { RepoLocks } from "./repo-lock.js";

/** What every workspace operation needs: where things live, the repository locks, where artifacts go. */
export interface WorkspaceDeps {
  layout: WorkspaceLayout;
  locks: RepoLocks;
  /** The daemon's state directory; snapshots and bundles are written under it. */
  stateDir: string;
  /** Identity for daemon-made commits when the repository's git config names nobody. */
  identity: GitIdentity;
}

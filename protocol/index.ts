import type { ActionDefinition } from "./define.js";
import { stateInfo } from "./actions/state-info.js";
import { stateGuide } from "./actions/state-guide.js";
import { stateCatalog } from "./actions/state-catalog.js";
import { shell } from "./actions/shell.js";
import { filesDownload } from "./actions/files-download.js";
import { filesExtract } from "./actions/files-extract.js";
import { filesRun } from "./actions/files-run.js";
import { jobsCancel, jobsFollow, jobsInput, jobsList, jobsOutput, jobsResize, jobsStatus, jobsUnfollow, jobsWait } from "./actions/jobs.js";
import { tokensCreate } from "./actions/tokens-create.js";
import { reposAdd } from "./actions/repos-add.js";
import { reposList } from "./actions/repos-list.js";
import { reposSnapshot } from "./actions/repos-snapshot.js";
import { reposBundle } from "./actions/repos-bundle.js";
import { tasksCreate } from "./actions/tasks-create.js";
import { tasksList } from "./actions/tasks-list.js";
import { tasksCommit } from "./actions/tasks-commit.js";
import { tasksMerge } from "./actions/tasks-merge.js";
import { tasksRemove } from "./actions/tasks-remove.js";
import { secretsWrite } from "./actions/secrets-write.js";
import { prepare } from "./actions/prepare.js";
import { FS_ACTIONS } from "./actions/files-fs.js";

export * from "./common.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./define.js";

/** Bumped on any incompatible change to the wire format. */
export const PROTOCOL_VERSION = 1;

/** Every action, explicitly; the dispatcher, the guide test and state.info read this list. */
export const ACTIONS: readonly ActionDefinition[] = [
  stateInfo,
  stateGuide,
  stateCatalog,
  shell,
  filesDownload,
  filesExtract,
  filesRun,
  jobsList,
  jobsStatus,
  jobsOutput,
  jobsFollow,
  jobsUnfollow,
  jobsWait,
  jobsInput,
  jobsResize,
  jobsCancel,
  tokensCreate,
  reposAdd,
  reposList,
  reposSnapshot,
  reposBundle,
  tasksCreate,
  tasksList,
  tasksCommit,
  tasksMerge,
  tasksRemove,
  secretsWrite,
  prepare,
  ...FS_ACTIONS,
];

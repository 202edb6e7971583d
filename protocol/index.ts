import type { ParamsOf, ResultOf } from "./define.js";
import { stateInfo } from "./actions/state-info.js";
import { stateGuide } from "./actions/state-guide.js";
import { stateCatalog } from "./actions/state-catalog.js";
import { shell } from "./actions/shell.js";
import { filesDownload } from "./actions/files-download.js";
import { filesExtract } from "./actions/files-extract.js";
import { filesRun } from "./actions/files-run.js";
import { jobsCancel, jobsFollow, jobsInput, jobsList, jobsOutput, jobsResize, jobsStatus, jobsUnfollow, jobsWait } from "./actions/jobs.js";
import { tokensCreate } from "./actions/tokens-create.js";
import { tokensList, tokensRevoke } from "./actions/tokens-manage.js";
import { reposAdd } from "./actions/repos-add.js";
import { reposList } from "./actions/repos-list.js";
import { reposSnapshot } from "./actions/repos-snapshot.js";
import { reposBundle } from "./actions/repos-bundle.js";
import { tasksCreate } from "./actions/tasks-create.js";
import { tasksList } from "./actions/tasks-list.js";
import { tasksCommit } from "./actions/tasks-commit.js";
import { tasksRun } from "./actions/tasks-run.js";
import { tasksMerge } from "./actions/tasks-merge.js";
import { tasksRemove } from "./actions/tasks-remove.js";
import { secretsWrite } from "./actions/secrets-write.js";
import { prepare } from "./actions/prepare.js";
import { cacheList } from "./actions/cache-list.js";
import { cachePrune } from "./actions/cache-prune.js";
import { FS_ACTIONS } from "./actions/files-fs.js";
import { consoleOpen, terminalOpen } from "./actions/browser.js";
import { jobsUnwatch, jobsWatch } from "./actions/jobs-watch.js";
import { sshOpen } from "./actions/ssh.js";
import { portsList, portsWait } from "./actions/ports.js";
import { previewOpen } from "./actions/preview.js";
import { browserOpen, desktopAct, desktopOpen, desktopScreenshot } from "./actions/desktop.js";
import { stateMetrics } from "./actions/state-metrics.js";
import { sessionClose, sessionList, sessionOpen, sessionRun, sessionStatus } from "./actions/session.js";
import { codeContextCreate, codeContextList, codeContextRemove, codeContextRestart, codeFile, codeRun } from "./actions/code.js";

export * from "./common.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./define.js";

/** Bumped on any incompatible change to the wire format. */
export const PROTOCOL_VERSION = 1;

/**
 * Every action, explicitly; the dispatcher, the guide test and state.info read this list. Its type is
 * inferred (no annotation) so each entry keeps its literal name: the typed registry below follows it.
 */
export const ACTIONS = [
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
  tokensList,
  tokensRevoke,
  reposAdd,
  reposList,
  reposSnapshot,
  reposBundle,
  tasksCreate,
  tasksList,
  tasksCommit,
  tasksRun,
  tasksMerge,
  tasksRemove,
  secretsWrite,
  prepare,
  cacheList,
  cachePrune,
  ...FS_ACTIONS,
  terminalOpen,
  consoleOpen,
  jobsWatch,
  jobsUnwatch,
  sshOpen,
  portsList,
  portsWait,
  previewOpen,
  desktopScreenshot,
  desktopAct,
  browserOpen,
  desktopOpen,
  stateMetrics,
  sessionOpen,
  sessionRun,
  sessionStatus,
  sessionList,
  sessionClose,
  codeContextCreate,
  codeRun,
  codeContextList,
  codeContextRestart,
  codeContextRemove,
  codeFile,
];

/** One entry of ACTIONS, with its literal name and its own params and result schemas. */
export type RegisteredAction = (typeof ACTIONS)[number];
/** Every action name, checked at compile time. */
export type ActionName = RegisteredAction["name"];
/** The definition registered under a name. */
export type ActionNamed<N extends ActionName> = Extract<RegisteredAction, { name: N }>;
/** The request fields of an action (without `id` and `action`), as the daemon validates them. */
export type ParamsFor<N extends ActionName> = ParamsOf<ActionNamed<N>>;
/** The `result` of an action's successful reply. */
export type ResultFor<N extends ActionName> = ResultOf<ActionNamed<N>>;

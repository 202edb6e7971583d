import type { ActionDefinition } from "./define.js";
import { stateInfo } from "./actions/state-info.js";
import { stateGuide } from "./actions/state-guide.js";
import { stateCatalog } from "./actions/state-catalog.js";
import { shell } from "./actions/shell.js";
import { jobsCancel, jobsFollow, jobsInput, jobsList, jobsOutput, jobsResize, jobsStatus, jobsUnfollow, jobsWait } from "./actions/jobs.js";
import { tokensCreate } from "./actions/tokens-create.js";
import { prepare } from "./actions/prepare.js";

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
  prepare,
];

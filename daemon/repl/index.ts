/**
 * The long-lived child behind shell sessions and code contexts: one child per generation in its own
 * process group, driven one request at a time over a private channel (fd 3 daemon → child, fd 4
 * child → daemon); each request a job whose log holds its output only; interrupt → grace →
 * terminate → restart; a budget of live children. The faces (daemon/sessions, daemon/code) are
 * drivers of it.
 */
export { Repl } from "./repl.js";
export type { ChildStart, ReplDriver, ReplEnd, ReplOptions, ReplRequest, ReplState, RequestStopper } from "./types.js";
export { ReplChild, type ChildExit, type ChildSpec, MESSAGES_FD, REQUESTS_FD } from "./child.js";
export type { HostSpec } from "./host.js";
export { ChildBudget, residentBytes, type BudgetOptions, type Reservation } from "./budget.js";
export { RecordSplitter, type Decoder, type DecoderFactory } from "./records.js";
export { ndjsonDecoder, ndjsonLine } from "./ndjson.js";
export { afterPendingOutput } from "./drain.js";
export { READY_TIMEOUT_MS } from "./start-watch.js";
export { RESTART_AFTER_KILL_MS, TERM_AFTER_INTERRUPT_MS } from "./request.js";

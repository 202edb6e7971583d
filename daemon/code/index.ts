/**
 * Code contexts: stateful Python and JavaScript interpreters, each a driver (daemon/code/drivers,
 * stdlib only) over daemon/repl; each run a job of kind `code` whose result holds the run's MIME
 * bundles (figures, tables, the last value) or its error, and says honestly when state was lost.
 */
export { type CodeLimits, type CodeServices, CodeContextTable, type CreateRequest, DEFAULT_CODE_LIMITS } from "./table.js";
export { CODE_CONTEXT_KIND, CodeContext } from "./context.js";
export { CODE_RUN_KIND } from "./run.js";
export { statusOf } from "./status.js";
export { readRunFile } from "./files.js";
export { SYSTEM_PYTHON } from "./interpreter.js";

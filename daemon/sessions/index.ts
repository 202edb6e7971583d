/**
 * Shell sessions: a long-lived bash per session (driver.bash over daemon/repl), each command a job
 * with its own output and exit code, cd/export/functions/venvs carried from one to the next.
 */
export { DEFAULT_SESSION_LIMITS, type OpenRequest, type SessionLimits, type SessionServices, SessionTable } from "./table.js";
export { SESSION_COMMAND_KIND, SESSION_SHELL_KIND, type SessionState, ShellSession } from "./session.js";
export type { Gone } from "./gone.js";
export { LOST_ON_RESUME } from "./gone.js";
export { DRIVER_RC, NONINTERACTIVE_DEFAULTS } from "./driver.js";
export { type SessionStatusWire, statusOf, statusWithProcesses } from "./status.js";

/**
 * hotline/client: a typed client for the hotline daemon. Action names, params and results are the
 * protocol's own types (protocol/index.ts); errors are HotlineError with the wire's stable codes.
 */
export { connect, HotlineClient, type ConnectOptions, type ShellResult } from "./client.js";
export { Job } from "./job.js";
export { Session, type SessionJobStatus, type SessionRunResult, type SessionStatus } from "./session.js";
export { CodeClient, type CodeImage, type CodeRun, type CodeRunOptions } from "./code.js";
export { FollowStream, type FollowOptions, type ReconnectPolicy } from "./follow.js";
export { HotlineError } from "./errors.js";
export type { FollowEvent, OutputChunk } from "./frames.js";
export { discoverDaemon, type Endpoint } from "./discovery.js";
export { hotlineDirectories, type DirectoryOptions } from "./directories.js";
export type { ActionName, ParamsFor, ResultFor } from "../protocol/index.js";
export type { ErrorCode, WireError } from "../protocol/errors.js";
export type { JobState, JobStatus, OutputStream, Progress } from "../protocol/common.js";
export type { CodeLanguage, CodeOutput, CodeRunResult, ContextStatus } from "../protocol/actions/code.js";

import { Type, type Static } from "@sinclair/typebox";
import { Encoding, JobId, JobState, JobStatus, OutputStream, Progress } from "./common.js";

/** Server-initiated frames: they carry `event` instead of `id`/`ok`. */
export const JobOutputEvent = Type.Object({
  event: Type.Literal("job.output"),
  job: JobId,
  stream: OutputStream,
  offset: Type.Integer({ minimum: 0 }),
  data: Type.String(),
  encoding: Encoding,
});
export const JobProgressEvent = Type.Object({ event: Type.Literal("job.progress"), job: JobId, progress: Progress });
export const JobStateEvent = Type.Object({ event: Type.Literal("job.state"), job: JobId, state: JobState });
export const JobExitEvent = Type.Object({ event: Type.Literal("job.exit"), job: JobId, status: JobStatus, next: Type.Integer({ minimum: 0 }) });

/** A change under a files.watch: `kind` is create, modify, remove, or overflow (events were dropped; re-list). */
export const FsChangeEvent = Type.Object({
  event: Type.Literal("fs.change"),
  watch: Type.String(),
  path: Type.String(),
  kind: Type.Union([Type.Literal("create"), Type.Literal("modify"), Type.Literal("remove"), Type.Literal("overflow")]),
});

export const EVENTS = [JobOutputEvent, JobProgressEvent, JobStateEvent, JobExitEvent, FsChangeEvent] as const;
export type JobOutputEvent = Static<typeof JobOutputEvent>;
export type JobExitEvent = Static<typeof JobExitEvent>;
export type FsChangeEvent = Static<typeof FsChangeEvent>;
export type ServerEvent = Static<(typeof EVENTS)[number]>;

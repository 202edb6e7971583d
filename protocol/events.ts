import { Type, type Static } from "@sinclair/typebox";
import { Encoding, JobId, JobState, JobStatus, OutputStream, Progress, WireErrorSchema } from "./common.js";

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
/** `status` (the whole status at the change) is sent to jobs.watch subscribers; followers get id and state. */
export const JobStateEvent = Type.Object({
  event: Type.Literal("job.state"),
  job: JobId,
  state: JobState,
  status: Type.Optional(JobStatus),
});
/** To jobs.watch subscribers: a job was started (or queued) after the watch began. */
export const JobCreatedEvent = Type.Object({ event: Type.Literal("job.created"), job: JobId, status: JobStatus });
/**
 * The last event of a follow. `error` is present when the follow ended before the end of the log:
 * `not_found` when retention deleted the job (and its output) while the follower was behind,
 * `unavailable` when its output could not be read; `next` is where the follower stopped.
 */
export const JobExitEvent = Type.Object({
  event: Type.Literal("job.exit"),
  job: JobId,
  status: JobStatus,
  next: Type.Integer({ minimum: 0 }),
  error: Type.Optional(WireErrorSchema),
});

/** A change under a files.watch: `kind` is create, modify, remove, or overflow (events were dropped; re-list). */
export const FsChangeEvent = Type.Object({
  event: Type.Literal("fs.change"),
  watch: Type.String(),
  path: Type.String(),
  kind: Type.Union([Type.Literal("create"), Type.Literal("modify"), Type.Literal("remove"), Type.Literal("overflow")]),
});

/** The JSON header of the binary frame that carries a files.read with binary: true; the raw bytes follow it. */
export const FilesDataHeader = Type.Object({
  event: Type.Literal("files.data"),
  path: Type.String(),
  offset: Type.Integer({ minimum: 0 }),
});
export type FilesDataHeader = Static<typeof FilesDataHeader>;

export const EVENTS = [JobOutputEvent, JobProgressEvent, JobStateEvent, JobExitEvent, JobCreatedEvent, FsChangeEvent] as const;
export type JobOutputEvent = Static<typeof JobOutputEvent>;
export type JobExitEvent = Static<typeof JobExitEvent>;
export type FsChangeEvent = Static<typeof FsChangeEvent>;
export type ServerEvent = Static<(typeof EVENTS)[number]>;

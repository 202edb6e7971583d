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
export const JobStateEvent = Type.Object({ event: Type.Literal("job.state"), job: JobId, state: JobState });
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

export const EVENTS = [JobOutputEvent, JobProgressEvent, JobStateEvent, JobExitEvent] as const;
export type JobOutputEvent = Static<typeof JobOutputEvent>;
export type JobExitEvent = Static<typeof JobExitEvent>;
export type ServerEvent = Static<(typeof EVENTS)[number]>;

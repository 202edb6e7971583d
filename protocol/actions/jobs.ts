import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { Encoding, JobId, JobState, JobStatus, OutputStream } from "../common.js";

const Offset = Type.Integer({ minimum: 0 });

export const jobsList = defineAction({
  name: "jobs.list",
  scope: "observe",
  summary: "Jobs, newest first (or by CPU or memory used), optionally filtered by state and kind (default limit 20).",
  params: Type.Object(
    {
      state: Type.Optional(Type.Union([JobState, Type.Array(JobState, { minItems: 1 })])),
      kind: Type.Optional(Type.String({ maxLength: 100 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      before: Type.Optional(JobId),
      sort: Type.Optional(
        Type.Union([Type.Literal("newest"), Type.Literal("cpu"), Type.Literal("memory")], {
          description: "newest (default), or most usage.cpuMs / usage.peakRssBytes first; jobs without usage last",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ jobs: Type.Array(JobStatus), more: Type.Boolean() }),
});

export const jobsStatus = defineAction({
  name: "jobs.status",
  scope: "observe",
  summary: "One job's status.",
  params: Type.Object({ job: JobId }, { additionalProperties: false }),
  result: JobStatus,
});

export const jobsOutput = defineAction({
  name: "jobs.output",
  scope: "observe",
  summary: "Bytes of a job's output log from an offset, with the offset to ask for next.",
  params: Type.Object(
    {
      job: JobId,
      from: Type.Optional(Offset),
      /** Instead of `from`: start this many bytes (of `stream`, when given) before the end, moved forward to a line start. */
      tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 4194304 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 4194304 })),
      stream: Type.Optional(OutputStream),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ data: Type.String(), encoding: Encoding, from: Offset, next: Offset, eof: Type.Boolean() }),
});

export const jobsFollow = defineAction({
  name: "jobs.follow",
  scope: "observe",
  summary: "Stream a job's output as job.output events from an offset, then live, then job.exit.",
  params: Type.Object(
    { job: JobId, from: Type.Optional(Offset), stream: Type.Optional(OutputStream), binary: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
  result: Type.Object({ job: JobStatus, from: Offset }),
});

export const jobsUnfollow = defineAction({
  name: "jobs.unfollow",
  scope: "observe",
  summary: "Stop the events of a jobs.follow on this connection.",
  params: Type.Object({ job: JobId }, { additionalProperties: false }),
  result: Type.Object({ followed: Type.Boolean() }),
});

export const jobsWait = defineAction({
  name: "jobs.wait",
  scope: "observe",
  summary: "Wait for a job to end; at the timeout, the current status (the job keeps running).",
  params: Type.Object({ job: JobId, timeoutMs: Type.Integer({ minimum: 0, maximum: 600000 }) }, { additionalProperties: false }),
  result: Type.Object({ job: JobStatus, timedOut: Type.Boolean() }),
});

export const jobsInput = defineAction({
  name: "jobs.input",
  scope: "manage",
  summary: "Write to a job's stdin (or terminal); eof closes stdin.",
  params: Type.Object(
    {
      job: JobId,
      data: Type.Optional(Type.String({ maxLength: 1048576 })),
      encoding: Type.Optional(Encoding),
      eof: Type.Optional(Type.Boolean()),
      /** How long the reply may wait for the job to take the bytes (default 30000). */
      timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000 })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ written: Type.Integer({ minimum: 0 }) }),
});

export const jobsResize = defineAction({
  name: "jobs.resize",
  scope: "manage",
  summary: "Resize a terminal job.",
  params: Type.Object(
    { job: JobId, cols: Type.Integer({ minimum: 1, maximum: 1000 }), rows: Type.Integer({ minimum: 1, maximum: 1000 }) },
    { additionalProperties: false },
  ),
  result: Type.Object({ cols: Type.Integer(), rows: Type.Integer() }),
});

export const jobsCancel = defineAction({
  name: "jobs.cancel",
  scope: "manage",
  summary: "Signal the job's whole process group, then SIGKILL after the grace period.",
  params: Type.Object(
    {
      job: JobId,
      signal: Type.Optional(
        Type.Union(["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2"].map((s) => Type.Literal(s))),
      ),
      graceMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000 })),
      /** Wait up to this many ms for the job to end, so the reply shows its final state. */
      wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000 })),
    },
    { additionalProperties: false },
  ),
  result: JobStatus,
});

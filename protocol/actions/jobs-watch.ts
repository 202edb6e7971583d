import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { JobStatus } from "../common.js";

export const jobsWatch = defineAction({
  name: "jobs.watch",
  scope: "observe",
  summary: "The newest jobs now, then job.created, job.state and job.progress events for every job on this connection.",
  params: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }, { additionalProperties: false }),
  result: Type.Object({ jobs: Type.Array(JobStatus), more: Type.Boolean() }),
});

export const jobsUnwatch = defineAction({
  name: "jobs.unwatch",
  scope: "observe",
  summary: "Stop the events of jobs.watch on this connection.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ watching: Type.Boolean({ description: "whether a watch was running (and is now stopped)" }) }),
});

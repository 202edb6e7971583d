import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, EnvMap, InlineOutput, JobDeadline, JobStartOptions, JobStatus } from "../common.js";

/** The process-job fields shared by `shell` and `files.run`. */
export const ProcessOptions = {
  cwd: Type.Optional(AbsolutePath),
  env: Type.Optional(EnvMap),
  ...JobDeadline,
  stdin: Type.Optional(Type.Union([Type.String({ maxLength: 1048576 }), Type.Boolean()])),
  pty: Type.Optional(
    Type.Object(
      { cols: Type.Integer({ minimum: 1, maximum: 1000 }), rows: Type.Integer({ minimum: 1, maximum: 1000 }) },
      { additionalProperties: false },
    ),
  ),
  ...JobStartOptions,
};

/** Reply of every action that starts a process job: the status, plus the output when `wait` saw it end. */
export const ProcessStartResult = Type.Object({ job: JobStatus, output: Type.Optional(InlineOutput) });

export const shell = defineAction({
  name: "shell",
  scope: "manage",
  summary: "Run a command as a managed job: a string under `bash -c`, an array without a shell; pipes or a terminal.",
  params: Type.Object(
    {
      command: Type.Union([
        Type.String({ minLength: 1, maxLength: 131072 }),
        Type.Array(Type.String({ maxLength: 131072 }), { minItems: 1, maxItems: 4096 }),
      ]),
      ...ProcessOptions,
    },
    { additionalProperties: false },
  ),
  result: ProcessStartResult,
});

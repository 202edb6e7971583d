import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath } from "../common.js";
import { ProcessOptions, ProcessStartResult } from "./shell.js";

const { pty: _pty, ...RunOptions } = ProcessOptions;

export const filesRun = defineAction({
  name: "files.run",
  scope: "manage",
  summary: "Run a bash, sh or python3 script as a managed job, exactly like shell (prepared environment, cancel, timeout, wait).",
  params: Type.Object(
    {
      path: AbsolutePath,
      interpreter: Type.Optional(Type.Union([Type.Literal("bash"), Type.Literal("sh"), Type.Literal("python3")])),
      args: Type.Optional(Type.Array(Type.String({ maxLength: 131072 }), { maxItems: 4096 })),
      ...RunOptions,
    },
    { additionalProperties: false },
  ),
  result: ProcessStartResult,
});

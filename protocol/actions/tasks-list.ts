import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { RepoId, TaskInfo } from "../workspace.js";

export const tasksList = defineAction({
  name: "tasks.list",
  scope: "observe",
  summary: "The tasks (optionally of one repository) with their branch, base and current commit.",
  params: Type.Object({ repo: Type.Optional(RepoId) }, { additionalProperties: false }),
  result: Type.Object({ tasks: Type.Array(TaskInfo) }),
});

import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { RepoInfo } from "../workspace.js";

export const reposList = defineAction({
  name: "repos.list",
  scope: "observe",
  summary: "The repositories' shared clones with their checked-out branch, commit and origin.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ repos: Type.Array(RepoInfo) }),
});

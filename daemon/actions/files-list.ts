import { stat } from "node:fs/promises";
import { filesList } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { listTree } from "../fs/list.js";
import { policyFor, resolveFollow } from "../fs/policy.js";
import { sessionOf } from "../fs/session.js";
import { entry } from "./context.js";

export default entry(filesList, async (params, { services, connection }) => {
  const policy = await policyFor(services.config);
  const real = await resolveFollow(policy, params.path);
  if (!(await stat(real)).isDirectory())
    throw new ActionError("invalid_request", `${params.path} is not a directory; use files.stat for one file`, { path: "/path" });
  return listTree(policy, real, params, sessionOf(connection).signal);
});

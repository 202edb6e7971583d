import { filesEdit } from "../../protocol/actions/files-fs.js";
import { editFile } from "../fs/edit.js";
import { assertNotGuardedInode, policyFor, resolveWriteTarget } from "../fs/policy.js";
import { sessionOf } from "../fs/session.js";
import { entry } from "./context.js";

export default entry(filesEdit, async (params, { services, connection }) => {
  const policy = await policyFor(services.config);
  const real = await resolveWriteTarget(policy, params.path);
  return editFile(real, params.edits, params.ifMatch, {
    signal: sessionOf(connection).signal,
    check: (st) => assertNotGuardedInode(policy, st, real),
  });
});

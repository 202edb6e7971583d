import { filesEdit } from "../../protocol/actions/files-fs.js";
import { editFile } from "../fs/edit.js";
import { policyFor, resolveWriteTarget } from "../fs/policy.js";
import { entry } from "./context.js";

export default entry(filesEdit, async (params, { services }) => {
  const real = await resolveWriteTarget(await policyFor(services.config), params.path);
  return editFile(real, params.edits, params.ifMatch);
});

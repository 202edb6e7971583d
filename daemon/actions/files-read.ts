import { filesRead } from "../../protocol/actions/files-fs.js";
import { policyFor, resolveFollow } from "../fs/policy.js";
import { readSlice } from "../fs/read.js";
import { entry } from "./context.js";

// Reads follow symbolic links; the link's target is what the policy checks.
export default entry(filesRead, async (params, { services }) => {
  const real = await resolveFollow(await policyFor(services.config), params.path);
  return readSlice(real, params);
});

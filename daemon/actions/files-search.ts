import { filesSearch } from "../../protocol/actions/files-fs.js";
import { policyFor, resolveFollow } from "../fs/policy.js";
import { search } from "../fs/search.js";
import { entry } from "./context.js";

export default entry(filesSearch, async (params, { services }) => {
  const policy = await policyFor(services.config);
  return search(policy, await resolveFollow(policy, params.path), params);
});

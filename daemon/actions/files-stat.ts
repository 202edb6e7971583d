import { filesStat } from "../../protocol/actions/files-fs.js";
import { describe } from "../fs/entry.js";
import { policyFor, resolveEntry } from "../fs/policy.js";
import { entry } from "./context.js";

// The entry itself: a link is described with its target, not followed.
export default entry(filesStat, async (params, { services }) =>
  describe(await resolveEntry(await policyFor(services.config), params.path)),
);

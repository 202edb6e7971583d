import { lstat, mkdir } from "node:fs/promises";
import { filesMkdir } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { fsError, isMissing } from "../fs/errors.js";
import { policyFor, resolveEntry } from "../fs/policy.js";
import { parseMode } from "../fs/publish.js";
import { entry } from "./context.js";

export default entry(filesMkdir, async (params, { services }) => {
  const real = await resolveEntry(await policyFor(services.config), params.path);
  try {
    const st = await lstat(real);
    if (st.isDirectory()) return { path: real, created: false };
    throw new ActionError("conflict", `${params.path} exists and is not a directory`, { path: "/path" });
  } catch (err) {
    if (!isMissing(err)) throw fsError(err, params.path);
  }
  try {
    await mkdir(real, { recursive: params.parents === true, mode: parseMode(params.mode) ?? 0o755 });
  } catch (err) {
    if (isMissing(err))
      throw new ActionError("not_found", `the parent of ${params.path} does not exist; pass parents: true to create it too`, {
        path: "/path",
      });
    throw fsError(err, params.path);
  }
  return { path: real, created: true };
});

import { lstat, rmdir, unlink } from "node:fs/promises";
import { filesRemove } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { fileType } from "../fs/entry.js";
import { fsError } from "../fs/errors.js";
import { assertNotAncestor, policyFor, resolveEntry } from "../fs/policy.js";
import { removeTree } from "../fs/remove.js";
import { sessionOf } from "../fs/session.js";
import { entry } from "./context.js";

// A link is unlinked, never its target; a directory needs recursive: true unless it is empty.
export default entry(filesRemove, async (params, { services, connection }) => {
  const policy = await policyFor(services.config);
  const real = await resolveEntry(policy, params.path);
  const st = await lstat(real).catch((err: unknown) => Promise.reject(fsError(err, params.path)));
  try {
    if (!st.isDirectory()) await unlink(real);
    else {
      assertNotAncestor(policy, real);
      if (params.recursive) await removeTree(real, sessionOf(connection).signal);
      else await rmdir(real);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOTEMPTY")
      throw new ActionError(
        "conflict",
        `${params.path} is a directory that is not empty; pass recursive: true to remove it with its contents`,
        { path: "/recursive" },
      );
    throw fsError(err, params.path);
  }
  return { path: real, type: fileType(st) };
});

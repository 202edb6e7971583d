import { lstat, rename } from "node:fs/promises";
import { filesMove } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { fsError, isMissing } from "../fs/errors.js";
import { withPathLock } from "../fs/path-lock.js";
import { assertNotAncestor, policyFor, resolveEntry, within } from "../fs/policy.js";
import { entry } from "./context.js";

// Moves the entry itself (a link stays a link); one rename, so within one filesystem.
export default entry(filesMove, async (params, { services }) => {
  const policy = await policyFor(services.config);
  const from = await resolveEntry(policy, params.from, "/from");
  const to = await resolveEntry(policy, params.to, "/to");
  await lstat(from).catch((err: unknown) => Promise.reject(fsError(err, params.from, "/from")));
  assertNotAncestor(policy, from, "/from");
  if (policy.roots.includes(to))
    throw new ActionError("invalid_request", `${params.to} is / , the home directory or the workspace root; it is never replaced`, {
      path: "/to",
    });
  if (within(to, from)) throw new ActionError("invalid_request", `cannot move ${params.from} into itself (${params.to})`, { path: "/to" });
  return withPathLock(to, async () => {
    if (!params.overwrite) {
      const exists = await lstat(to).then(
        () => true,
        (err: unknown) => (isMissing(err) ? false : Promise.reject(fsError(err, params.to, "/to"))),
      );
      if (exists) throw new ActionError("conflict", `${params.to} already exists; pass overwrite: true to replace it`, { path: "/to" });
    }
    try {
      await rename(from, to);
    } catch (err) {
      throw fsError(err, params.to, "/to");
    }
    return { from, to };
  });
});

import { filesRead } from "../../protocol/actions/files-fs.js";
import { assertNotGuardedInode, policyFor, resolveFollow } from "../fs/policy.js";
import { readSlice } from "../fs/read.js";
import { sessionOf } from "../fs/session.js";
import { entry } from "./context.js";

// Reads follow symbolic links; the link's target is what the policy checks.
export default entry(filesRead, async (params, { services, connection, afterReply }) => {
  const policy = await policyFor(services.config);
  const real = await resolveFollow(policy, params.path);
  // A client that does not read its socket gets no more bytes queued for it until it does.
  if (!connection.sink.writable) await new Promise<void>((resolve) => connection.sink.onDrain(resolve));
  const { frame, ...result } = await readSlice(real, params, sessionOf(connection).hashes, (st) => assertNotGuardedInode(policy, st, real));
  if (frame) afterReply(() => connection.sink.sendBinary(frame));
  return result;
});

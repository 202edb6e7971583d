import { filesWrite } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { policyFor, resolveWriteTarget } from "../fs/policy.js";
import { parseMode, writeAtomic } from "../fs/publish.js";
import { sessionOf } from "../fs/session.js";
import { MAX_UPLOAD_BYTES_PER_CONNECTION, MAX_UPLOADS_PER_CONNECTION, Upload } from "../fs/uploads.js";
import { entry } from "./context.js";

export default entry(filesWrite, async (params, { services, connection }) => {
  const data = decode(params.data, params.encoding);
  const final = params.final ?? true;
  const session = sessionOf(connection);
  if (params.upload !== undefined) {
    const upload = session.uploads.get(params.upload);
    if (!upload)
      throw new ActionError(
        "not_found",
        `upload ${params.upload} is not open on this connection (published, abandoned after idling, or started on another connection); start again without upload`,
        { path: "/upload" },
      );
    for (const field of ["mode", "parents", "ifMatch"] as const) {
      if (params[field] !== undefined)
        throw new ActionError("invalid_request", `${field} belongs to the first chunk of an upload; leave it out of later chunks`, {
          path: `/${field}`,
        });
    }
    if (params.path !== upload.requested)
      throw new ActionError("invalid_request", `upload ${upload.id} writes ${upload.requested}, not ${params.path}`, { path: "/path" });
    checkBudget(session.uploads.values(), data.length);
    // Queued before the first await, so pipelined chunks are applied in the order they arrived.
    const published = await upload.chunk(params.offset ?? upload.received, data, final);
    return published
      ? { ...published, done: true, received: upload.received }
      : { path: upload.target, done: false, received: upload.received, upload: upload.id };
  }
  if ((params.offset ?? 0) !== 0)
    throw new ActionError("invalid_request", `offset ${params.offset} without upload: the first chunk starts at 0`, { path: "/offset" });
  const real = await resolveWriteTarget(await policyFor(services.config), params.path);
  const options = { mode: parseMode(params.mode), ifMatch: params.ifMatch, parents: params.parents, signal: session.signal };
  if (final) return { ...(await writeAtomic(real, data, options)), done: true, received: data.length };
  if (session.uploads.size >= MAX_UPLOADS_PER_CONNECTION) {
    throw new ActionError(
      "limit_exceeded",
      `at most ${MAX_UPLOADS_PER_CONNECTION} uploads may be open per connection; finish one (final: true) first`,
    );
  }
  checkBudget(session.uploads.values(), data.length);
  const upload = await Upload.start(params.path, real, options, (u) => session.uploads.delete(u.id));
  session.adopt("uploads", upload, MAX_UPLOADS_PER_CONNECTION, (u) => void u.abandon().catch(() => undefined));
  await upload.chunk(0, data, false);
  return { path: real, done: false, received: upload.received, upload: upload.id };
});

/** Refuses a chunk that would take the connection's unpublished bytes past their budget. */
function checkBudget(uploads: Iterable<Upload>, adding: number): void {
  let pending = adding;
  for (const u of uploads) pending += u.received;
  if (pending > MAX_UPLOAD_BYTES_PER_CONNECTION) {
    throw new ActionError(
      "limit_exceeded",
      `open uploads of this connection would hold ${pending} bytes, over ${MAX_UPLOAD_BYTES_PER_CONNECTION}; finish or abandon one first`,
      { path: "/data" },
    );
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of `data`; base64 is checked, since Buffer.from silently skips what it cannot decode. */
function decode(data: string, encoding: "utf8" | "base64" | undefined): Buffer {
  if (encoding !== "base64") return Buffer.from(data, "utf8");
  if (data.length % 4 !== 0 || !BASE64.test(data))
    throw new ActionError("invalid_request", "data is not valid base64 (RFC 4648, padded, no line breaks)", { path: "/data" });
  return Buffer.from(data, "base64");
}

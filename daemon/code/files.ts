import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { CODE_FILE_MAX_LIMIT } from "../../protocol/actions/code.js";
import { ActionError } from "../../protocol/errors.js";
import type { Job } from "../jobs/job.js";
import { runFilesDir } from "./outputs.js";
import { CODE_RUN_KIND } from "./run.js";

/**
 * Bytes of a file a run kept (an output's `files`), from `offset`, at most `limit`. Only a run's own
 * directory is read, by a plain name (the schema's pattern), never following a link out of it.
 */
export async function readRunFile(job: Job, file: string, offset = 0, limit = CODE_FILE_MAX_LIMIT) {
  if (job.record.kind !== CODE_RUN_KIND)
    throw new ActionError("invalid_request", `job ${job.id} is a ${job.record.kind} job, not a code run`, { path: "/job" });
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NOFOLLOW: a name in the directory that is a link is refused, not followed.
    handle = await open(join(runFilesDir(job.dir), file), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ActionError("not_found", `run ${job.id} has no file ${file}${code === "ENOENT" ? "" : ` (${code})`}`, { path: "/file" });
  }
  try {
    const { size } = await handle.stat();
    const start = Math.min(offset, size);
    const length = Math.min(limit, size - start);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = length > 0 ? await handle.read(buffer, 0, length, start) : { bytesRead: 0 };
    const next = start + bytesRead;
    return {
      data: buffer.subarray(0, bytesRead).toString("base64"),
      encoding: "base64" as const,
      size,
      offset: start,
      next,
      eof: next >= size,
    };
  } finally {
    await handle.close();
  }
}

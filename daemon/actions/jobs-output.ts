import { jobsOutput } from "../../protocol/actions/jobs.js";
import { ActionError } from "../../protocol/errors.js";
import { outputStats } from "../jobs/output-stats.js";
import { tailLineStart } from "../jobs/tail.js";
import { completeUtf8Length, encodeBytes } from "../jobs/utf8.js";
import { entry } from "./context.js";

const DEFAULT_LIMIT = 1024 * 1024;

export default entry(jobsOutput, async (params, { services }) => {
  const job = services.jobs.get(params.job);
  const log = job.log!;
  if (params.tail !== undefined && params.from !== undefined) {
    throw new ActionError("invalid_request", "jobs.output: give from (an offset) or tail (bytes before the end), not both", {
      path: "/tail",
    });
  }
  const start = params.tail !== undefined ? tailLineStart(log, params.tail, params.stream) : (params.from ?? 0);
  const { pieces, from, next } = log.read(start, params.limit ?? DEFAULT_LIMIT, params.stream);
  let bytes = Buffer.concat(pieces.map((p) => p.data));
  let end = next;
  // Cut at a character boundary when more follows, so text stays text; the rest comes next time.
  if (next < log.size && pieces.length > 0) {
    const usable = completeUtf8Length(bytes);
    if (usable > 0 && usable < bytes.length) {
      end = next - (bytes.length - usable);
      bytes = bytes.subarray(0, usable);
    }
  }
  outputStats.readBytes += bytes.length;
  return { ...encodeBytes(bytes), from, next: end, eof: job.finished && end >= log.size };
});

import { dirname } from "node:path";
import { filesExtract } from "../../protocol/actions/files-extract.js";
import { extractArchive } from "../runners/extract/index.js";
import { entry } from "./context.js";
import { startFileJob } from "./files-job.js";

export default entry(filesExtract, async (params, ctx) =>
  startFileJob(
    {
      kind: "files.extract",
      title: `extract ${params.archive} to ${params.dest}`,
      params: { ...params, wait: undefined },
      key: params.key,
      timeoutMs: params.timeoutMs,
      wait: params.wait,
      cwd: dirname(params.dest),
      work: async (jobCtx) => ({ ...(await extractArchive(jobCtx, { archive: params.archive, dest: params.dest, format: params.format, strip: params.strip })) }),
      summary: (r) => `extracted ${String(r.entries)} entries (${String(r.bytes)} bytes, ${String(r.format)}) to ${String(r.dest)}`,
    },
    ctx,
  ),
);

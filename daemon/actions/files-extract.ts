import { dirname } from "node:path";
import { filesExtract } from "../../protocol/actions/files-extract.js";
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
      work: async (jobCtx) => ({
        ...(await (
          await loadExtractor()
        )(jobCtx, { archive: params.archive, dest: params.dest, format: params.format, strip: params.strip, parents: params.parents })),
      }),
      summary: (r) => {
        const top = r.topLevel as string[];
        const shown = top.slice(0, 10).join(", ") + (top.length > 10 || r.topLevelTruncated ? ", …" : "");
        return `extracted ${String(r.entries)} entries (${String(r.bytes)} bytes, ${String(r.format)}) to ${String(r.dest)}: ${shown || "(empty)"}`;
      },
    },
    ctx,
  ),
);

/** The archive decoders (tar-stream, yauzl, fzstd, xz WASM) load with the first extraction, not at start-up. */
async function loadExtractor(): Promise<typeof import("../runners/extract/index.js").extractArchive> {
  return (await import("../runners/extract/index.js")).extractArchive;
}

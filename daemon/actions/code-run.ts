import { codeRun } from "../../protocol/actions/code.js";
import type { CodeRunResult } from "../../protocol/actions/code.js";
import { entry } from "./context.js";
import { inlineOutput } from "./inline-output.js";

export default entry(codeRun, async (params, { services }) => {
  const context = await services.code.forRun(params);
  const job = context.run(params.code, { timeoutMs: params.timeoutMs, key: params.key });
  if (!params.wait) return { job: job.status() };
  const { job: status } = await services.jobs.wait(job.id, params.wait);
  if (!job.finished) return { job: status };
  // The run's result once, at the top (jobs.status gives it as the job's `result`).
  const { result, ...rest } = status;
  return { job: rest, result: result as CodeRunResult | undefined, ...(job.log ? { output: inlineOutput(job.log) } : {}) };
});

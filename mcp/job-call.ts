import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ActionName, HotlineClient, JobStatus } from "../client/index.js";
import type { ActionDefinition } from "../protocol/define.js";
import { FINAL_STATES } from "../protocol/common.js";
import { readInlineOutput } from "./output.js";
import { reportProgress, type ProgressUpdate } from "./progress.js";
import { actionResult, endedJobResult, runningJobResult, startedJobResult } from "./results.js";
import { DEFAULT_WAIT_MS } from "./tools.js";

/** What the MCP request gives a tool call: its cancellation, and a progress sink when the caller sent a progressToken. */
export interface CallContext {
  signal: AbortSignal;
  progress?: (update: ProgressUpdate) => Promise<void>;
}

/** A cancelled call gives the job this long to end after SIGTERM before the daemon kills its group. */
const CANCEL_WAIT_MS = 5000;

/**
 * A job-starting tool: starts the job without the daemon waiting (so the call knows the job id at
 * once and can cancel it), then waits here up to `wait` ms (default 30 s) while reporting
 * progress. Cancelling the MCP request cancels the job.
 */
export async function callJobTool(
  client: HotlineClient,
  action: ActionDefinition,
  params: Record<string, unknown>,
  ctx: CallContext,
): Promise<CallToolResult> {
  const { wait, ...rest } = params;
  const waitMs = typeof wait === "number" ? wait : DEFAULT_WAIT_MS;
  const started = (await client.request(action.name as ActionName, rest as never)) as Record<string, unknown> & { job?: JobStatus };
  // Some job actions may answer without starting one (prepare of a cached recipe: ready, no job).
  if (started.job === undefined) return actionResult(action.name, started);
  // wait: 0 is "start it and tell me its id": no wait and no output read (the agent asked for none).
  if (waitMs === 0 && !FINAL_STATES.includes(started.job.state)) return startedJobResult(started, started.job);
  const handle = client.job(started.job.id);
  const cancel = (): void => void handle.cancel({ wait: CANCEL_WAIT_MS }).catch(() => undefined);
  if (ctx.signal.aborted) cancel();
  else ctx.signal.addEventListener("abort", cancel, { once: true });
  const report =
    ctx.progress && !FINAL_STATES.includes(started.job.state) ? reportProgress(client, started.job.id, ctx.progress) : undefined;
  const begun = Date.now();
  let job: JobStatus;
  try {
    job = FINAL_STATES.includes(started.job.state) ? started.job : await handle.wait({ timeoutMs: waitMs });
  } finally {
    ctx.signal.removeEventListener("abort", cancel);
    await report?.stop();
  }
  const output = await readInlineOutput(client, job);
  if (FINAL_STATES.includes(job.state)) {
    const hasOutputField = (action.result as { properties?: Record<string, unknown> }).properties?.output !== undefined;
    return endedJobResult({ ...started, job, ...(hasOutputField ? { output } : {}) }, job, output);
  }
  return runningJobResult({ ...started, job }, job, output, Date.now() - begun);
}

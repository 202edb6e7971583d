import { sessionRun } from "../../protocol/actions/session.js";
import { entry } from "./context.js";
import { inlineOutput } from "./inline-output.js";

export default entry(sessionRun, async (params, { services }) => {
  const session = services.sessions.forRun(params.session);
  const job = session.run(params.command, { timeoutMs: params.timeoutMs, key: params.key });
  if (!params.wait) return { job: job.status() };
  // jobs.wait also returns when the command starts waiting for input: the agent sees the prompt now.
  const { job: status } = await services.jobs.wait(job.id, params.wait);
  const showOutput = job.finished || (status as { awaitingInput?: true }).awaitingInput === true;
  return showOutput && job.log ? { job: status, output: inlineOutput(job.log) } : { job: status };
});

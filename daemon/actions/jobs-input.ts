import { jobsInput } from "../../protocol/actions/jobs.js";
import { ActionError } from "../../protocol/errors.js";
import { entry } from "./context.js";

/** How long a reply waits, by default, for a job to take its input. */
const INPUT_TIMEOUT_MS = 30_000;

export default entry(jobsInput, async (params, { services }) => {
  const job = services.jobs.get(params.job);
  if (job.finished)
    throw new ActionError("conflict", `job ${job.id} has ended (${job.state}); input goes only to running jobs`, { path: "/job" });
  if (!job.control.input) throw new ActionError("conflict", `job ${job.id} (${job.record.kind}) takes no input`, { path: "/job" });
  const data = Buffer.from(params.data ?? "", params.encoding === "base64" ? "base64" : "utf8");
  const written = await job.control.input(data, params.eof ?? false, params.timeoutMs ?? INPUT_TIMEOUT_MS);
  if (written < 0) {
    throw new ActionError("conflict", `job ${job.id} has no open stdin; start it with "stdin": true to write to it later`, {
      path: "/job",
    });
  }
  return { written };
});

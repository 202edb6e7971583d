import { dirname } from "node:path";
import { filesRun } from "../../protocol/actions/files-run.js";
import { chooseInterpreter } from "../runners/interpreter.js";
import { entry } from "./context.js";
import { startProcessJob } from "./process-job.js";

/** files.run is a shell job with a chosen interpreter: same environment, cancel, timeout, output and wait. */
export default entry(filesRun, async (params, ctx) => {
  const choice = await chooseInterpreter(params.path, params.interpreter, params.args ?? []);
  return startProcessJob(
    {
      kind: "files.run",
      title: `run ${choice.argv.join(" ")}`.slice(0, 200),
      argv: choice.argv,
      params: { ...params, wait: undefined },
      // The script's own directory by default, so the prepared environment of its workspace applies.
      cwd: params.cwd ?? dirname(params.path),
      env: params.env,
      timeoutMs: params.timeoutMs,
      stdin: params.stdin,
      wait: params.wait,
      key: params.key,
    },
    ctx,
  );
});

import { shell } from "../../protocol/actions/shell.js";
import { entry } from "./context.js";
import { commandOf, startProcessJob } from "./process-job.js";

export default entry(shell, async (params, ctx) => {
  const { argv, title, argPath } = commandOf(params.command);
  return startProcessJob(
    {
      kind: params.pty ? "terminal" : "shell",
      title,
      argv,
      params: { ...params, wait: undefined },
      cwd: params.cwd,
      env: params.env,
      timeoutMs: params.timeoutMs,
      stdin: params.stdin,
      pty: params.pty,
      wait: params.wait,
      key: params.key,
      argPath,
    },
    ctx,
  );
});

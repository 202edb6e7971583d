import { shell } from "../../protocol/actions/shell.js";
import { shellCommandLine } from "../util/shell-quote.js";
import { entry } from "./context.js";
import { startProcessJob } from "./process-job.js";

const TITLE_MAX = 200;

export default entry(shell, async (params, ctx) => {
  const argv = typeof params.command === "string" ? ["bash", "-c", params.command] : params.command;
  const text = typeof params.command === "string" ? params.command : shellCommandLine(params.command);
  return startProcessJob(
    {
      kind: params.pty ? "terminal" : "shell",
      title: text.length > TITLE_MAX ? `${text.slice(0, TITLE_MAX - 1)}…` : text,
      argv,
      params: { ...params, wait: undefined },
      cwd: params.cwd,
      env: params.env,
      timeoutMs: params.timeoutMs,
      stdin: params.stdin,
      pty: params.pty,
      wait: params.wait,
      key: params.key,
      argPath: (i) => (typeof params.command === "string" ? (i === 2 ? "/command" : undefined) : `/command/${i}`),
    },
    ctx,
  );
});

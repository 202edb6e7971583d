import { tasksRun } from "../../protocol/actions/tasks-run.js";
import { entry } from "./context.js";
import { commandOf, startProcessJob } from "./process-job.js";

/**
 * The driver for external coders: the task's worktree (created when missing), the command run
 * there as a job with the prepared environment, and on success a commit like tasks.commit. The
 * worktree's `.env` stays a file the command may read; it is never put in argv or the environment.
 */
export default entry(tasksRun, async (params, ctx) => {
  const { workspace } = ctx.services;
  const task = await workspace.ensureTask({ task: params.task, repo: params.repo, base: params.base, lockTimeoutMs: params.lockTimeoutMs });
  const { argv, text, title, argPath } = commandOf(params.command, `${task.task}: `);
  const message = params.message ?? `tasks.run: ${text.length > 1000 ? `${text.slice(0, 999)}…` : text}`;
  return startProcessJob(
    {
      kind: "tasks.run",
      title,
      argv,
      params: { ...params, wait: undefined },
      cwd: task.path,
      env: params.env,
      timeoutMs: params.timeoutMs,
      stdin: params.stdin,
      wait: params.wait,
      key: params.key,
      argPath,
      // A failed or cancelled command commits nothing: the worktree stays as it left it, for inspection.
      after: async (outcome, jobCtx) => {
        if (!outcome.ok || jobCtx.signal.aborted) return outcome;
        jobCtx.progress({ phase: "commit", message: task.branch });
        const commit = await workspace.commit({ task: task.task, message, lockTimeoutMs: params.lockTimeoutMs }, jobCtx);
        const { lockWaitMs: _, ...committed } = commit;
        return { ...outcome, result: { ...committed, repo: task.repo, path: task.path, created: task.created } };
      },
    },
    ctx,
  );
});

import type { ContextStatus } from "../../protocol/actions/code.js";
import { residentBytes } from "../repl/index.js";
import type { CodeContext } from "./context.js";

/** A context as the protocol shows it (code.context.create, list, restart). */
export function statusOf(context: CodeContext): ContextStatus {
  const { settings } = context;
  const status: ContextStatus = {
    id: context.id,
    language: context.language,
    cwd: settings.cwd,
    generation: context.generation,
    state: context.state,
    executionCount: context.executionCount,
    ...context.knownNames,
    idleTimeoutMs: settings.idleTimeoutMs,
    createdAt: settings.createdAt,
  };
  if (settings.isDefault) status.default = true;
  if (context.ready) {
    status.interpreter = context.ready.executable;
    status.version = context.ready.version;
  }
  const { job, pid, hostJob } = context.live;
  if (job) status.job = job;
  if (pid !== undefined) {
    status.pid = pid;
    status.memoryBytes = residentBytes(pid);
  }
  if (hostJob) status.hostJob = hostJob;
  if (context.lastRunAt) status.lastRunAt = context.lastRunAt;
  if (context.stopped) status.stopped = context.stopped;
  return status;
}

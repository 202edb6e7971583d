import type { PortInfo } from "../preview/ports.js";
import type { Services } from "./context.js";

/**
 * A listener's `job` as this daemon may name it: the job marker in a process's environment is
 * inherited by anything a job starts, another hotline daemon's jobs included, so a marker that
 * names no job of this daemon's is reported as `foreignJob`, never as a job id.
 */
export function ownJobsOnly(ports: PortInfo[], jobs: Services["jobs"]): PortInfo[] {
  return ports.map((port) => {
    if (port.job === undefined) return port;
    try {
      jobs.get(port.job);
      return port;
    } catch {
      const { job: _foreign, ...rest } = port;
      return { ...rest, foreignJob: true as const };
    }
  });
}

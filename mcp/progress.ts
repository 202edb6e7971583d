import type { HotlineClient } from "../client/index.js";
import { FINAL_STATES, type Progress } from "../protocol/common.js";

/** One notifications/progress payload (without the token). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** How often the job's status is looked at (each look is a jobs.wait that returns at once when the job ends). */
const INTERVAL_MS = 200;

/**
 * Turns a job's status into MCP progress. MCP requires `progress` to rise with every notification,
 * while a job's own progress restarts at each phase (builds, then bytes): each phase is counted on
 * top of where the previous one ended. Jobs without progress of their own report output bytes.
 */
class ProgressMapper {
  private last = -1;
  private base = 0;
  private phase: string | undefined;

  fromJob(p: Progress): ProgressUpdate | undefined {
    if (p.phase !== this.phase) {
      this.base = Math.max(0, this.last);
      this.phase = p.phase;
    }
    const total = p.total !== null ? this.base + p.total : undefined;
    const message = `${p.phase}: ${p.done}${p.total !== null ? ` of ${p.total}` : ""} ${p.unit}${p.message ? ` — ${p.message}` : ""}`;
    return this.emit(this.base + p.done, total, message);
  }

  fromOutput(outputBytes: number): ProgressUpdate | undefined {
    return this.emit(outputBytes, undefined, `${outputBytes} bytes of output`);
  }

  private emit(progress: number, total: number | undefined, message: string): ProgressUpdate | undefined {
    if (progress <= this.last) return undefined;
    this.last = progress;
    return { progress, ...(total !== undefined ? { total } : {}), message };
  }
}

/** A running progress report; stop() ends it and resolves once no notification is in flight. */
export interface ProgressReport {
  stop(): Promise<void>;
}

/**
 * Looks at the job's status every INTERVAL_MS and sends its progress (or its output's size). The
 * status carries both, so nothing streams the job's output just to count it (for /mcp that stream
 * would run through the daemon's own event loop).
 */
export function reportProgress(client: HotlineClient, job: string, send: (update: ProgressUpdate) => Promise<void>): ProgressReport {
  const mapper = new ProgressMapper();
  let stopped = false;
  let sending: Promise<void> = Promise.resolve();
  const loop = (async () => {
    while (!stopped) {
      const { job: status } = await client.request("jobs.wait", { job, timeoutMs: INTERVAL_MS });
      const update = status.progress ? mapper.fromJob(status.progress) : mapper.fromOutput(status.outputBytes);
      // One at a time and in order; a notification that cannot be sent (the caller left) is not an error of the job.
      if (update) sending = sending.then(() => send(update)).catch(() => undefined);
      if (FINAL_STATES.includes(status.state)) break;
    }
  })().catch(() => undefined); // a failed look only ends the progress report
  return {
    async stop() {
      stopped = true;
      await loop;
      await sending;
    },
  };
}

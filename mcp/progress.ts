import type { HotlineClient } from "../client/index.js";
import type { Progress } from "../protocol/common.js";

/** One notifications/progress payload (without the token). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Output-only jobs report their byte count at most this often (job progress is already throttled by the daemon). */
const OUTPUT_INTERVAL_MS = 200;

/**
 * Turns a job's events into MCP progress. MCP requires `progress` to rise with every notification,
 * while a job's own progress restarts at each phase (builds, then bytes): each phase is counted on
 * top of where the previous one ended. Jobs without progress of their own report output bytes.
 */
class ProgressMapper {
  private last = -1;
  private base = 0;
  private phase: string | undefined;
  private outputBytes = 0;
  private lastOutputAt = 0;
  private sawJobProgress = false;

  fromJob(p: Progress): ProgressUpdate | undefined {
    this.sawJobProgress = true;
    if (p.phase !== this.phase) {
      this.base = Math.max(0, this.last);
      this.phase = p.phase;
    }
    const total = p.total !== null ? this.base + p.total : undefined;
    const message = `${p.phase}: ${p.done}${p.total !== null ? ` of ${p.total}` : ""} ${p.unit}${p.message ? ` — ${p.message}` : ""}`;
    return this.emit(this.base + p.done, total, message);
  }

  fromOutput(bytes: number): ProgressUpdate | undefined {
    this.outputBytes += bytes;
    if (this.sawJobProgress || Date.now() - this.lastOutputAt < OUTPUT_INTERVAL_MS) return undefined;
    this.lastOutputAt = Date.now();
    return this.emit(this.outputBytes, undefined, `${this.outputBytes} bytes of output`);
  }

  private emit(progress: number, total: number | undefined, message: string): ProgressUpdate | undefined {
    if (progress <= this.last) return undefined;
    this.last = progress;
    return { progress, ...(total !== undefined ? { total } : {}), message };
  }
}

/** A running progress report; stop() ends the follow and resolves once no notification is in flight. */
export interface ProgressReport {
  stop(): Promise<void>;
}

/** Follows the job (the client's follow, resuming over dropped sockets) and sends its progress. */
export function reportProgress(client: HotlineClient, job: string, send: (update: ProgressUpdate) => Promise<void>): ProgressReport {
  const follow = client.job(job).follow();
  const mapper = new ProgressMapper();
  let sending: Promise<void> = Promise.resolve();
  const loop = (async () => {
    for await (const event of follow) {
      const update =
        event.event === "job.progress"
          ? mapper.fromJob(event.progress)
          : event.event === "job.output"
            ? mapper.fromOutput(event.bytes.length)
            : undefined;
      // One at a time and in order; a notification that cannot be sent (the caller left) is not an error of the job.
      if (update) sending = sending.then(() => send(update)).catch(() => undefined);
    }
  })().catch(() => undefined); // a follow that fails only ends the progress report
  return {
    async stop() {
      await follow.stop();
      await loop;
      await sending;
    },
  };
}

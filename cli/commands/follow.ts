import type { JobStatus } from "../../protocol/common.js";
import type { HotlineClient } from "../client.js";
import { DaemonGone } from "../exit-codes.js";
import type { LiveLine } from "./live-line.js";

export interface FollowOptions {
  /** Output offset to start from (`tail --from`). */
  from?: number;
  /** Each output chunk; default: nothing (the caller prints a summary instead). */
  onOutput?: (stream: string, bytes: Buffer) => void;
  onProgress?: (progress: Record<string, unknown>) => void;
  /** Every event of the job as received (`--json` prints them as JSON lines). */
  onEvent?: (event: Record<string, unknown>) => void;
}

/**
 * Follows a job until its job.exit and resolves with the final status. Rejects with DaemonGone
 * when the connection ends first: the daemon stopped or died, and nothing more will arrive.
 */
export function untilJobExit(client: HotlineClient, job: string, options: FollowOptions = {}): Promise<JobStatus> {
  return new Promise<JobStatus>((resolve, reject) => {
    let done = false;
    const off = client.onEvent((event) => {
      if (event.job !== job || done) return;
      options.onEvent?.(event);
      if (event.event === "job.output" && options.onOutput) {
        const bytes = Buffer.isBuffer(event.bytes) ? event.bytes : Buffer.from(event.data as string, event.encoding === "base64" ? "base64" : "utf8");
        options.onOutput(String(event.stream), bytes);
      } else if (event.event === "job.progress") options.onProgress?.(event.progress as Record<string, unknown>);
      else if (event.event === "job.exit") {
        done = true;
        off();
        resolve(event.status as JobStatus);
      }
    });
    client.onClose((code, reason) => {
      if (done) return;
      done = true;
      off();
      reject(new DaemonGone(job, code, reason));
    });
    client.request("jobs.follow", { job, from: options.from ?? 0 }).catch((err: Error) => {
      if (done) return;
      done = true;
      off();
      reject(err);
    });
  });
}

/** Writes a job's output to this process's stdout/stderr (or, with `json`, every event as one JSON line). */
export function followToStdio(client: HotlineClient, job: string, options: { from?: number; json?: boolean; live?: LiveLine; onProgress?: FollowOptions["onProgress"] } = {}): Promise<JobStatus> {
  if (options.json) {
    return untilJobExit(client, job, { from: options.from, onEvent: (event) => process.stdout.write(`${JSON.stringify(event)}\n`) });
  }
  const write = (stream: string, bytes: Buffer): void => {
    const out = stream === "stderr" ? process.stderr : process.stdout;
    if (options.live) options.live.output(out, bytes);
    else out.write(bytes);
  };
  return untilJobExit(client, job, { from: options.from, onOutput: write, onProgress: options.onProgress });
}

import { isUtf8 } from "node:buffer";
import type { FollowEvent } from "../../client/frames.js";
import { HotlineError } from "../../client/errors.js";
import type { JobStatus } from "../../protocol/common.js";
import type { CliClient } from "../client.js";
import { DaemonGone } from "../exit-codes.js";
import type { LiveLine } from "./live-line.js";

export interface FollowOptions {
  /** Output offset to start from (`tail --from`). */
  from?: number;
  /** Each output chunk; default: nothing (the caller prints a summary instead). */
  onOutput?: (stream: string, bytes: Buffer) => void;
  onProgress?: (progress: Record<string, unknown>) => void;
  /** Every event of the job as the wire has it (output as `data` + `encoding`); `--json` prints them as JSON lines. */
  onEvent?: (event: Record<string, unknown>) => void;
}

/** An event as a JSON text follower receives it: output bytes back as `data` + `encoding`. */
function wireEvent(event: FollowEvent): Record<string, unknown> {
  if (event.event !== "job.output") return event;
  const { bytes, ...header } = event;
  // The text protocol's rule: UTF-8 text as it is, anything else base64.
  return isUtf8(bytes)
    ? { ...header, data: bytes.toString("utf8"), encoding: "utf8" }
    : { ...header, data: bytes.toString("base64"), encoding: "base64" };
}

/**
 * Follows a job until its job.exit (hotline/client's follow, which reconnects after a dropped
 * socket) and resolves with the final status. Rejects with DaemonGone when the daemon cannot be
 * reached again: it stopped or died, and nothing more will arrive.
 */
export async function untilJobExit(client: CliClient, job: string, options: FollowOptions = {}): Promise<JobStatus> {
  // JSON lines show events as the text protocol has them, so their chunks are whole UTF-8 characters.
  const events = await client.follow(job, { from: options.from ?? 0, binary: !options.onEvent });
  try {
    for await (const event of events) {
      options.onEvent?.(wireEvent(event));
      if (event.event === "job.output") options.onOutput?.(event.stream, event.bytes);
      else if (event.event === "job.progress") options.onProgress?.(event.progress as unknown as Record<string, unknown>);
      else if (event.event === "job.exit") return event.status;
    }
  } catch (err) {
    if (err instanceof HotlineError && err.code === "unavailable") throw new DaemonGone(job, err.message);
    throw err;
  } finally {
    await events.stop();
  }
  throw new DaemonGone(job, "the follow ended before job.exit");
}

/** Writes a job's output to this process's stdout/stderr (or, with `json`, every event as one JSON line). */
export function followToStdio(
  client: CliClient,
  job: string,
  options: { from?: number; json?: boolean; live?: LiveLine; onProgress?: FollowOptions["onProgress"] } = {},
): Promise<JobStatus> {
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

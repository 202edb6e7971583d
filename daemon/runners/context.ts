import type { Logger } from "pino";

/** What a runner may report while it works; any field left out keeps its previous value. */
export interface ProgressUpdate {
  phase?: string;
  done?: number;
  total?: number | null;
  unit?: string;
  message?: string;
}

/**
 * The only door from a runner to the job that hosts it. Runners never import jobs or actions:
 * the job layer builds one of these per job and hands it in.
 */
export interface RunContext {
  /** Aborted on cancel or timeout; every timer, request and child process must follow it. */
  signal: AbortSignal;
  log: Logger;
  /** Bytes for the job's ordered output log (written to disk before any follower sees them). */
  output(stream: "stdout" | "stderr" | "pty", data: Buffer | string): void;
  progress(update: ProgressUpdate): void;
}

import type { Logger } from "pino";
import type { JobControl } from "../jobs/job.js";
import type { JobContext, JobManager, JobOutcome } from "../jobs/manager.js";
import type { ChildBudget } from "./budget.js";
import type { HostSpec } from "./host.js";
import type { ChildExit, ChildSpec, ReplChild } from "./child.js";
import type { DecoderFactory } from "./records.js";

/**
 * A long-lived child's life. `busy`: one request runs; `restarting`: a new generation is starting
 * after the last one was killed; `exited`: the child ended by itself (`exit 3`); `closed`: the daemon
 * ended it (close, idle timeout, shutdown). Only `idle`, `busy` and `restarting` take requests.
 */
export type ReplState = "starting" | "idle" | "busy" | "restarting" | "exited" | "closed";

/** What a generation's child is started with. */
export interface ChildStart {
  /** A private directory (the host job's `tmp`) that lives as long as the host job. */
  scratch: string;
  /** The host job: its id is the marker (AGENT_JOB_ID) that finds the child's processes. */
  hostJob: string;
  generation: number;
}

/** What a face tells the core about its driver: how to start it, read it, and stop a request. */
export interface ReplDriver<M> {
  /** The child of one generation (see ChildStart). */
  spawn(start: ChildStart): ChildSpec;
  /** fd 4's framing: NDJSON (ndjsonDecoder) or the face's own. */
  decoder: DecoderFactory<M>;
  /** Whether this message says the child is ready; until it does, other messages are a protocol error. */
  isReady(message: M): boolean;
  /** How a running request is stopped on cancel or timeout. */
  stopper: RequestStopper;
}

/**
 * The steps of stopping a request: `interrupt` first (SIGINT), then `terminate` with SIGTERM after
 * the core's grace and SIGKILL when the job's own grace ends; a request still running a while after
 * that is ended by restarting the child (a new generation: its state is lost, and said so).
 */
export interface RequestStopper {
  interrupt(child: ReplChild): void;
  terminate(child: ReplChild, signal: "SIGTERM" | "SIGKILL"): void;
}

/** One request to the child: the job that reports it, and how the face speaks to the driver. */
export interface ReplRequest<M> {
  kind: string;
  title: string;
  /** What idempotency compares (the action's own parameters). */
  params: unknown;
  key?: string;
  timeoutMs?: number;
  cwd?: string;
  /** Writes the request to the child, once its job runs (a job may wait in the manager's queue). */
  send(child: ReplChild, job: JobContext): void;
  /** A message while the request runs: its outcome when it is the end, else undefined. */
  message(message: M, job: JobContext): JobOutcome | undefined;
  /**
   * The child exited while the request ran; default: failed with the child's exit code or signal.
   * With `restart`, the child is replaced at once (a new generation in the same place in the
   * budget) instead of the repl ending: the face knows the exit was not the user's wish.
   */
  exited?(exit: ChildExit, job: JobContext): JobOutcome | { outcome: JobOutcome; restart: string };
  /** The request did not stop and the child was restarted; default: failed, naming the new generation. */
  restarted?(generation: number, job: JobContext): JobOutcome;
  /** jobs.input of the request's job; default: the child's fd 0 (when it is a pipe). */
  input?: JobControl["input"];
  /** Rewrites a chunk before it is logged: a face drops its driver's own noise (bytes the user never wrote). */
  filter?(stream: "stdout" | "stderr", data: Buffer): Buffer;
  /** Each output byte of the request, after it is in the job's log (a transcript, a last line). */
  output?(stream: "stdout" | "stderr", data: Buffer): void;
  /** Runs once the request's output is all in its log, before its job ends; may change the outcome. */
  finish?(outcome: JobOutcome, job: JobContext): JobOutcome | Promise<JobOutcome>;
}

export interface ReplOptions<M> {
  jobs: JobManager;
  driver: ReplDriver<M>;
  /** The host job of each generation (see Generation). */
  host: HostSpec;
  budget: ChildBudget;
  log: Logger;
  /** Names the child in errors: "session s0m…", "context c0m…". */
  name: string;
  /** A child that sent no ready message by then is killed and its start fails. */
  readyTimeoutMs?: number;
  /** Closed after this long idle; 0 or absent: never. */
  idleTimeoutMs?: number;
  termGraceMs?: number;
  restartAfterKillMs?: number;
}

/** How the child's life ended, once it has: the daemon's reason, or its own exit. */
export interface ReplEnd {
  reason: string;
  exitCode?: number;
  signal?: string;
}

import { spawn } from "node:child_process";
import { ActionError } from "../../protocol/errors.js";
import { gitEnvironment } from "./git.js";
import { startChild } from "../watchdog/child-wait.js";

const STDERR_LIMIT = 8 * 1024;

export interface GitStreamOptions {
  cwd: string;
  /** git is stopped (killed) after this long. */
  timeoutMs: number;
  /** Each piece of stdout as it arrives; return false to stop git (enough was read). */
  onData: (chunk: Buffer) => boolean;
}

export interface GitStreamResult {
  exitCode: number | null;
  stderr: string;
  /** git was stopped by us: onData had enough, or the time ran out. */
  stopped: "enough" | "timeout" | undefined;
}

/**
 * Runs git and hands its stdout over piece by piece, for commands whose output can be larger
 * than any reply (`git grep`): the caller stops reading when it has enough and git is killed,
 * so output and time stay bounded. Same sanitized environment as runGit.
 */
export function streamGit(args: readonly string[], options: GitStreamOptions): Promise<GitStreamResult> {
  return new Promise((resolve, reject) => {
    // Not detached: a new session measurably slowed git grep on a loaded machine (its own
    // scheduling group), and the commands streamed here start no helpers of their own to reach.
    const child = startChild(() =>
      spawn("git", ["-c", "core.fsmonitor=false", ...args], {
        cwd: options.cwd,
        env: gitEnvironment(),
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    let stopped: GitStreamResult["stopped"];
    let stderr = "";
    const stop = (why: "enough" | "timeout"): void => {
      if (stopped) return;
      stopped = why;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      if (!stopped && !options.onData(chunk)) stop("enough");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString("utf8");
    });
    child.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === "ENOENT")
        reject(new ActionError("unavailable", "git is not installed or not on PATH; files.search and files.list with gitignore need git"));
      else reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, stderr: stderr.slice(0, STDERR_LIMIT), stopped });
    });
  });
}

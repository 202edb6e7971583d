import { spawn } from "node:child_process";
import { ActionError } from "../../protocol/errors.js";
import { startChild } from "../watchdog/child-wait.js";

export interface XCommandOptions {
  /** The X display the tool talks to (DISPLAY). */
  display: string;
  /** Bytes written to the tool's stdin, then EOF. */
  input?: Buffer;
  /** More stdout than this kills the tool (a screen larger than the daemon captures). */
  maxOutputBytes?: number;
  timeoutMs?: number;
  /** Turns what the tool said on stderr into a refusal although it exited 0 (xdotool ignores unknown key names). */
  refuse?: (stderr: string) => ActionError | undefined;
}

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
/** What the daemon keeps of a failing tool's stderr, for its message. */
const STDERR_KEEP = 2000;

/**
 * Runs one X client tool (xdotool, xwd, xmodmap, convert) to its end and resolves with its stdout,
 * bounded in size and time. A tool that fails, is missing or is killed rejects with `unavailable`
 * naming it and its stderr, so a vanished display reads as what it is.
 */
export function runX(file: string, args: readonly string[], options: XCommandOptions): Promise<Buffer> {
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolve, reject) => {
    const child = startChild(() =>
      spawn(file, args, {
        env: { ...process.env, DISPLAY: options.display },
        stdio: [options.input ? "pipe" : "ignore", "pipe", "pipe"],
      }),
    );
    const chunks: Buffer[] = [];
    let length = 0;
    let stderr = "";
    let over = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > max) {
        over = true;
        child.kill("SIGKILL");
      } else chunks.push(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk.toString("utf8");
    });
    if (options.input) {
      child.stdin!.on("error", () => {}); // a tool that exits early closes its stdin: its exit code says why
      child.stdin!.end(options.input);
    }
    child.on("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why = err.code === "ENOENT" ? `${file} is not installed` : `${file} could not start: ${err.message}`;
      reject(new ActionError("unavailable", why));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (over)
        return reject(
          new ActionError("limit_exceeded", `${file} wrote more than ${max} bytes; the screen is larger than the daemon captures`),
        );
      const refused = code === 0 ? options.refuse?.(stderr) : undefined;
      if (refused) return reject(refused);
      if (code === 0) return resolve(Buffer.concat(chunks, length));
      const how = signal ? `was killed (${signal}${signal === "SIGKILL" ? ", too slow" : ""})` : `exited ${code}`;
      const said = stderr.trim().slice(0, STDERR_KEEP);
      reject(new ActionError("unavailable", `${file} ${how} on display ${options.display}${said ? `: ${said}` : ""}`));
    });
  });
}

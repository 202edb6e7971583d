import { constants } from "node:os";
import { spawn } from "node-pty";
import type { RunContext } from "./context.js";
import type { ProcessControl, ProcessExit, ProcessSpec } from "./process.js";
import { reapMarked } from "../util/job-descendants.js";
import { reapGroup, signalGroup } from "../util/process-group.js";

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n as number, name]));

/**
 * Runs a command in a terminal (node-pty). The child leads its own session, so its pid is its
 * process group; everything it prints arrives as the "pty" stream.
 */
export function startPty(
  spec: ProcessSpec & { cols: number; rows: number },
  ctx: RunContext,
): { control: ProcessControl; done: Promise<ProcessExit> } {
  const [file, ...args] = spec.argv;
  let term: ReturnType<typeof spawn>;
  try {
    term = spawn(file!, args, {
      name: spec.env.TERM ?? "xterm-256color",
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env: spec.env,
      encoding: null,
    } as Parameters<typeof spawn>[2]);
  } catch (err) {
    return { control: { input: () => -1, kill: () => {} }, done: Promise.resolve({ spawnError: (err as Error).message }) };
  }
  term.onData((data: string | Buffer) => ctx.output("pty", typeof data === "string" ? Buffer.from(data) : data));
  if (typeof spec.stdin === "string") term.write(spec.stdin);

  const onAbort = (): void => {
    signalGroup(term.pid, "SIGKILL");
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  const done = new Promise<ProcessExit>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      ctx.signal.removeEventListener("abort", onAbort);
      reapGroup(term.pid);
      if (spec.jobId !== undefined) reapMarked(spec.jobId);
      if (signal) resolve({ signal: SIGNAL_NAMES.get(signal) ?? `SIG${signal}` });
      else resolve({ exitCode });
    });
  });

  const control: ProcessControl = {
    pid: term.pid,
    input(data, eof) {
      if (data.length) term.write(data.toString("utf8"));
      if (eof) term.write("\x04");
      return data.length;
    },
    kill(signal) {
      signalGroup(term.pid, signal);
    },
    resize(cols, rows) {
      term.resize(cols, rows);
    },
  };
  return { control, done };
}

import { spawn } from "node:child_process";
import type { ServerChannel } from "ssh2";
import { escalate, signalGroup } from "../process/index.js";
import type { Outflow } from "./outflow.js";
import { startChild } from "../watchdog/child-wait.js";

/** What the daemon does to a process a channel runs: signal its group, end it with the session. */
export interface ChannelProcess {
  signal(signal: NodeJS.Signals): void;
  /** Ends it (SIGHUP, as a closed terminal would, then SIGKILL): its channel has gone. */
  hangUp(): void;
  /** Settles once the process has ended and its channel has had its exit status. */
  done: Promise<void>;
}

/** Between a hang-up and SIGKILL for a process whose channel has gone. */
const HANGUP_GRACE_MS = 2000;

/** What to run on a channel: argv, cwd and the already composed environment. */
export interface ChannelCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Resolves once every byte written to `stream` so far has gone out (within the SSH window). */
function flushed(stream: NodeJS.WritableStream & { writableLength?: number }): Promise<void> {
  return new Promise((resolve) => {
    if (!stream.writable) return resolve();
    stream.write(Buffer.alloc(0), () => resolve());
  });
}

/** Sends the exit status (or signal, without its SIG prefix) and closes the channel once its data is out. */
export async function finishChannel(channel: ServerChannel, exit: { exitCode?: number | null; signal?: string | null }): Promise<void> {
  // A channel the client closed takes no more data: its writes would never call back.
  const gone = new Promise<void>((resolve) => channel.once("close", () => resolve()));
  await Promise.race([Promise.all([flushed(channel), flushed(channel.stderr)]), gone]);
  if (exit.signal) channel.exit(exit.signal.replace(/^SIG/, ""), false, "");
  else channel.exit(exit.exitCode ?? 255);
  channel.end();
}

/**
 * Runs a command with pipes on an SSH channel: stdin, stdout and stderr kept apart, EOF both ways,
 * and the output held to the connection's bounds (`outflow`: the SSH window and the socket's
 * backlog pause the pipes; an unread stdin holds the client's window shut). The process leads its
 * own group so signals and the hang-up reach all of it.
 */
export function runOnChannel(channel: ServerChannel, command: ChannelCommand, outflow: Outflow): ChannelProcess {
  const [file, ...args] = command.argv;
  let child: ReturnType<typeof spawn>;
  try {
    child = startChild(() => spawn(file!, args, { cwd: command.cwd, env: command.env, detached: true, stdio: ["pipe", "pipe", "pipe"] }));
  } catch (err) {
    return failed(channel, file!, err as Error);
  }
  let exited = false;
  child.stdin!.on("error", () => {}); // a process that exits before reading all its input
  channel.pipe(child.stdin!);
  outflow.pipe(child.stdout!, channel);
  outflow.pipe(child.stderr!, channel.stderr);
  const done = new Promise<void>((resolve) => {
    child.once("error", (err) => {
      if (child.pid !== undefined) return;
      exited = true;
      void failed(channel, file!, err).done.then(resolve);
    });
    child.once("exit", () => (exited = true));
    // "close" comes once the process has exited and its output pipes are drained into the channel.
    child.once("close", (exitCode, signal) => void finishChannel(channel, { exitCode, signal }).then(resolve, resolve));
  });
  const pid = child.pid;
  return {
    signal: (signal) => void signalGroup(pid, signal),
    hangUp() {
      if (exited)
        signalGroup(pid, "SIGHUP"); // what the leader left behind in its group
      else escalate((signal) => signalGroup(pid, signal), HANGUP_GRACE_MS, { first: "SIGHUP" });
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
    done,
  };
}

/** A command that could not start: the client reads why on stderr, and exit status 127 as a shell gives. */
function failed(channel: ServerChannel, file: string, err: Error): ChannelProcess {
  channel.stderr.write(`hotline: cannot start ${file}: ${err.message}\n`);
  return { signal: () => {}, hangUp: () => {}, done: finishChannel(channel, { exitCode: 127 }) };
}

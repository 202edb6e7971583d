import { statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Logger } from "pino";
import type { PseudoTtyInfo, ServerChannel, Session } from "ssh2";
import type { Job } from "../jobs/job.js";
import { escalate } from "../process/index.js";
import { type ChannelProcess, finishChannel, runOnChannel } from "./exec.js";
import type { Outflow } from "./outflow.js";
import { untilTurnHasRoom } from "../util/turn-budget.js";
import { work } from "../watchdog/work.js";
import { bridgeTerminal } from "./terminal-bridge.js";

/** An interactive shell as a terminal job: what the session asks the job layer for. */
export interface TerminalJobRequest {
  title: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
}

/** What a session needs from the daemon, shared by every session of the server. */
export interface SessionServices {
  log: Logger;
  home: string;
  /** The login shell (the daemon's SHELL, else bash). */
  shell: string;
  /** The environment of a process started in `cwd`: the daemon's, the workspace's prepared one, then `own`. */
  environment(cwd: string, own: Record<string, string>, terminal: boolean): Record<string, string>;
  /** Starts a terminal job (kind terminal, output kept, listed in jobs.list). */
  startTerminalJob(request: TerminalJobRequest): Promise<Job>;
  /** OpenSSH's sftp-server, when one was found. */
  sftpServer: string | undefined;
}

/** Variables a client may set with `env` requests (OpenSSH's SendEnv LANG LC_*), as sshd's AcceptEnv. */
const ACCEPTED_ENV = /^(LANG|LC_[A-Z_]+)$/;
const MAX_ENV_VALUE = 4096;
/** Between SIGHUP and SIGKILL for a shell whose client has gone. */
const HANGUP_GRACE_MS = 2000;
/** A terminal's columns and rows, each 1 to this (as jobs.resize): 0×0 (which OpenSSH sends as is) or an absurd size is ignored. */
const MAX_TERMINAL_SIDE = 1000;
/** The signals a client may send (RFC 4254 §6.10); other names are refused. */
const SIGNALS = new Set(["ABRT", "ALRM", "FPE", "HUP", "ILL", "INT", "KILL", "PIPE", "QUIT", "SEGV", "TERM", "USR1", "USR2"]);

/** Whether a terminal size can be given to a pty. */
function validSize(cols: number, rows: number): boolean {
  const side = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= MAX_TERMINAL_SIDE;
  return side(cols) && side(rows);
}

/**
 * The directory an exec command starts in: the directory of its leading `cd DIR &&` (or `;`) when
 * that is an existing absolute or ~ path, else the home directory. A prepared workspace's
 * environment is resolved from it, as a job's is from its cwd.
 */
export function commandDirectory(command: string, home: string): string {
  const m = /^\s*cd\s+(?:"([^"$`\\]+)"|'([^']+)'|([^\s;&|'"$`\\]+))\s*(?:&&|;)/.exec(command);
  const raw = m?.[1] ?? m?.[2] ?? m?.[3];
  if (raw === undefined) return home;
  const dir = raw === "~" ? home : raw.startsWith("~/") ? join(home, raw.slice(2)) : raw;
  if (!isAbsolute(dir)) return home;
  try {
    return statSync(dir).isDirectory() ? dir : home;
  } catch {
    return home;
  }
}

/**
 * One session channel: `pty`, `env`, `window-change` and `signal` requests, then one of `shell`
 * (a terminal job with a pty; piped otherwise), `exec` (piped, or a terminal with a pty) or the
 * `sftp` subsystem (OpenSSH's sftp-server on the channel). Whatever it runs ends with the channel.
 */
export function serveSession(session: Session, services: SessionServices, label: string, outflow: Outflow): void {
  let pty: PseudoTtyInfo | undefined;
  const own: Record<string, string> = {};
  let running: ChannelProcess | undefined;
  let resize: ((cols: number, rows: number) => void) | undefined;

  session.on("pty", (accept, _reject, info) => {
    pty = validSize(info.cols, info.rows) ? info : { ...info, cols: 80, rows: 24 };
    accept?.();
  });
  session.on("env", (accept, reject, info) => {
    if (!ACCEPTED_ENV.test(info.key) || info.val.length > MAX_ENV_VALUE) return reject?.();
    own[info.key] = info.val;
    accept?.();
  });
  // A throw in a request's handler would end the whole connection (ssh2 takes it for an error of its
  // own): sizes and signal names are checked first, and a resize that fails anyway is caught.
  let sizeIgnored = false;
  session.on("window-change", (accept, reject, info) => {
    if (!validSize(info.cols, info.rows)) {
      if (!sizeIgnored)
        services.log.info(
          { cols: info.cols, rows: info.rows, session: label },
          "ssh: window-change ignored (not a size a terminal can have)",
        );
      sizeIgnored = true;
      return reject?.();
    }
    if (pty) pty = { ...pty, cols: info.cols, rows: info.rows };
    try {
      resize?.(info.cols, info.rows);
    } catch (err) {
      services.log.warn({ err, session: label }, "ssh: resizing the terminal failed");
    }
    accept?.();
  });
  session.on("signal", (accept, reject, info) => {
    const name = String(info.name).replace(/^SIG/, "");
    if (!SIGNALS.has(name)) return reject?.();
    running?.signal(`SIG${name}` as NodeJS.Signals);
    accept?.();
  });
  // A session closes by its own CLOSE, or with its connection (then only its channel says so).
  let hungUp = false;
  const hangUp = (): void => {
    if (hungUp) return;
    hungUp = true;
    running?.hangUp();
  };
  session.on("close", hangUp);
  const opened = (channel: ServerChannel): ServerChannel => {
    channel.once("close", hangUp);
    return channel;
  };

  const terminalEnv = (): Record<string, string> => (pty?.term ? { ...own, TERM: pty.term } : own);
  // Spawns within the turn budget: a client opening many channels in one packet burst
  // (ControlMaster, JetBrains, a pipelining library) would otherwise fork them all in one turn of
  // the event loop (each fork of the daemon costs milliseconds), and setImmediate alone does not
  // spread them: immediates queued in one turn all run in the next check phase.
  const piped = (channel: ServerChannel, argv: string[], cwd: string): void => {
    const start = (): void => {
      if (hungUp) return;
      // Timed for the watchdog: a late turn spent starting channels' processes is blamed on them.
      const unit = work.begin("ssh channel start", label);
      try {
        running = work.timed(unit, () => runOnChannel(channel, { argv, cwd, env: services.environment(cwd, own, false) }, outflow));
      } finally {
        work.end(unit);
      }
    };
    const turn = untilTurnHasRoom();
    if (turn) void turn.then(start);
    else start();
  };

  // A terminal starts asynchronously (a job, or node-pty's first load); the session drives it once it runs.
  const terminal = (channel: ServerChannel, starting: Promise<ChannelTerminal>): void => {
    starting.then(
      (run) => {
        running = run.process;
        resize = run.resize;
        if (hungUp) run.process.hangUp();
      },
      (err: unknown) => {
        channel.stderr.write(`hotline: cannot open a terminal: ${(err as Error).message}\n`);
        void finishChannel(channel, { exitCode: 1 });
      },
    );
  };

  session.on("shell", (accept) => {
    const channel = opened(accept());
    if (!pty) return piped(channel, [services.shell, "-l"], services.home);
    terminal(channel, shellJob(channel, pty, terminalEnv(), services, label, outflow));
  });
  session.on("exec", (accept, _reject, info) => {
    const channel = opened(accept());
    const cwd = commandDirectory(info.command, services.home);
    const argv = [services.shell, "-c", info.command];
    if (!pty) return piped(channel, argv, cwd);
    terminal(channel, ptyCommand(channel, argv, cwd, pty, services.environment(cwd, terminalEnv(), true), services.log, outflow));
  });
  session.on("subsystem", (accept, reject, info) => {
    if (info.name !== "sftp" || !services.sftpServer) return reject?.();
    piped(opened(accept()), [services.sftpServer], services.home);
  });
}

/** A running terminal a channel shows: its process as the session controls it, and its size. */
interface ChannelTerminal {
  process: ChannelProcess;
  resize(cols: number, rows: number): void;
}

/** An interactive shell as a terminal job: listed, its output kept, driven by the channel. */
async function shellJob(
  channel: ServerChannel,
  pty: PseudoTtyInfo,
  own: Record<string, string>,
  services: SessionServices,
  label: string,
  outflow: Outflow,
): Promise<ChannelTerminal> {
  const job = await services.startTerminalJob({
    title: `ssh: ${services.shell} -l (${label})`,
    argv: [services.shell, "-l"],
    cwd: services.home,
    env: own,
    cols: pty.cols || 80,
    rows: pty.rows || 24,
  });
  const write = bridgeTerminal(channel, () => job.control, outflow);
  const onOutput = (_stream: string, _offset: number, data: Buffer): void => write(data);
  job.on("output", onOutput);
  const done = new Promise<void>((resolve) => {
    const end = (): void => {
      job.off("output", onOutput);
      void finishChannel(channel, { exitCode: job.record.exitCode, signal: job.record.signal }).then(resolve, resolve);
    };
    if (job.finished) end();
    else job.once("end", end);
  });
  const send = (signal: NodeJS.Signals): boolean => {
    if (job.finished) return false;
    job.control.kill?.(signal);
    return true;
  };
  return {
    process: { signal: (s) => void send(s), hangUp: () => void escalate(send, HANGUP_GRACE_MS, { first: "SIGHUP" }), done },
    resize: (cols, rows) => job.control.resize?.(cols, rows),
  };
}

/** An exec command with a pty (`ssh -t host cmd`): a terminal of its own, not a job. */
async function ptyCommand(
  channel: ServerChannel,
  argv: string[],
  cwd: string,
  pty: PseudoTtyInfo,
  env: Record<string, string>,
  log: Logger,
  outflow: Outflow,
): Promise<ChannelTerminal> {
  const { startPty } = await import("../runners/pty.js");
  await untilTurnHasRoom();
  const abort = new AbortController();
  let write: (data: Buffer) => void = () => {};
  const started = startPty(
    { argv, cwd, env, cols: pty.cols || 80, rows: pty.rows || 24 },
    { signal: abort.signal, log, output: (_stream, data) => write(typeof data === "string" ? Buffer.from(data) : data), progress() {} },
  );
  write = bridgeTerminal(channel, () => started.control, outflow);
  let exited = false;
  const done = started.done.then((exit) => {
    exited = true;
    if (exit.spawnError) channel.stderr.write(`hotline: ${exit.spawnError}\n`);
    return finishChannel(channel, exit.spawnError ? { exitCode: 127 } : exit);
  });
  const send = (signal: NodeJS.Signals): boolean => {
    if (exited) return false;
    started.control.kill(signal);
    return true;
  };
  return {
    process: { signal: (s) => void send(s), hangUp: () => void escalate(send, HANGUP_GRACE_MS, { first: "SIGHUP" }), done },
    resize: (cols, rows) => started.control.resize?.(cols, rows),
  };
}

import type { JobStatus } from "../../protocol/common.js";
import type { CliClient } from "../client.js";
import type { Command } from "../command.js";
import { displayText } from "../display.js";
import { EXIT } from "../exit-codes.js";
import { untilJobExit } from "./follow.js";
import { exitCodeOf, printResult } from "./print.js";

/** Ctrl-] (as telnet): leaves the terminal job running and returns to the local shell. */
const DETACH_KEY = 0x1d;
/** Reattaching replays this much of the terminal's output (the daemon's own default for terminals). */
const SCROLLBACK_BYTES = 256 * 1024;

type Opened =
  | {
      available: true;
      webTerminalUrl?: string;
      expiresAt: string;
      tokenId?: string;
      sshTokenId?: string;
      sshCommand?: string;
      job: JobStatus;
    }
  | { available: false; reason: string };

/** `hotline terminal [--link [--scope observe]] [--cwd D] [JOB]`: a terminal job, attached here or as a browser link (--url names the daemon, as for every verb). */
const terminal: Command = async ({ client, args, flags, json }) => {
  const params: Record<string, unknown> = {};
  if (args[0]) params.job = args[0];
  if (typeof flags.cwd === "string") params.cwd = flags.cwd;
  if (flags.link === true) {
    if (typeof flags.scope === "string") params.scope = flags.scope;
    const opened = await client.request<Opened>("terminal.open", params);
    printResult(opened, json, (opened) =>
      opened.available
        ? `${opened.webTerminalUrl ?? opened.sshCommand}\n(expires ${opened.expiresAt}; job ${opened.job.id})`
        : `no web terminal here: ${opened.reason}`,
    );
    return opened.available ? 0 : EXIT.other;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    process.stderr.write("hotline terminal: attaching needs a terminal on stdin and stdout; use --link for a browser link\n");
    return EXIT.usage;
  }
  const opened = await client.request<Opened>("terminal.open", { ...params, cols: process.stdout.columns, rows: process.stdout.rows });
  if (!opened.available) {
    process.stderr.write(`hotline terminal: no terminal here: ${displayText(opened.reason)}\n`);
    return EXIT.other;
  }
  // This attach speaks with the CLI's own token: the link's and the SSH credential are not needed.
  for (const tokenId of [opened.tokenId, opened.sshTokenId]) if (tokenId) await client.request("tokens.revoke", { tokenId });
  return attach(client, opened.job.id, Math.max(0, opened.job.outputBytes - SCROLLBACK_BYTES));
};

/** Raw mode, keys to jobs.input, output to stdout, SIGWINCH to jobs.resize, until exit or Ctrl-]. */
async function attach(client: CliClient, job: string, from: number): Promise<number> {
  const stdin = process.stdin;
  const resize = (): void =>
    void client.request("jobs.resize", { job, cols: process.stdout.columns, rows: process.stdout.rows }).catch(() => {});
  let detach: () => void = () => {};
  const detached = new Promise<"detached">((resolve) => (detach = () => resolve("detached")));
  const onKeys = (data: Buffer): void => {
    const at = data.indexOf(DETACH_KEY);
    const keys = at >= 0 ? data.subarray(0, at) : data;
    if (keys.length) void client.request("jobs.input", { job, data: keys.toString("base64"), encoding: "base64" }).catch(() => {});
    if (at >= 0) detach();
  };
  stdin.setRawMode(true);
  stdin.resume();
  stdin.on("data", onKeys);
  process.on("SIGWINCH", resize);
  resize();
  try {
    const ended = untilJobExit(client, job, { from, onOutput: (_stream, bytes) => process.stdout.write(bytes) });
    const outcome = await Promise.race([ended, detached]);
    if (outcome === "detached") {
      process.stderr.write(
        `\r\n[detached from ${job}; it keeps running: hotline terminal ${job} attaches again, hotline cancel ${job} ends it]\r\n`,
      );
      return 0;
    }
    return exitCodeOf(outcome);
  } finally {
    process.off("SIGWINCH", resize);
    stdin.off("data", onKeys);
    stdin.setRawMode(false);
    stdin.pause();
  }
}

/** `hotline console [--scope observe]`: prints a link to the operator console, with this CLI token's scope or a lower one. */
const console_: Command = async ({ client, json, flags }) => {
  const opened = await client.request<
    { available: true; consoleUrl: string; expiresAt: string; scope: string } | { available: false; reason: string }
  >("console.open", typeof flags.scope === "string" ? { scope: flags.scope } : {});
  printResult(opened, json, (opened) =>
    opened.available ? `${opened.consoleUrl}\n(${opened.scope} link, expires ${opened.expiresAt})` : `no console here: ${opened.reason}`,
  );
  return opened.available ? 0 : EXIT.other;
};

export const browserCommands: Record<string, Command> = { terminal, console: console_ };
